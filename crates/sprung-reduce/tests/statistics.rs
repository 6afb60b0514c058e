//! Document 004, Table 1 for the double-wishbone axle: the counts of the reduced model against
//! counts taken independently from the full model file (bodies and elements removed).

use sprung_reduce::{ReduceOptions, Statistics, reduce};

#[test]
fn statistics_of_full_and_reduced_axle() {
    let full =
        sprung_model::load(&sprung_test_support::model_path("double_wishbone.toml")).unwrap();
    let red = reduce(&full, &ReduceOptions::default()).unwrap();
    let reg = sprung::element_registry();
    let fc = sprung_mbs::compile_with(&full, &reg).unwrap();
    let rc = sprung_mbs::compile_with(&red.model, &reg).unwrap();
    let (sf, sr) = (Statistics::of(&full, &fc), Statistics::of(&red.model, &rc));
    print!("{}", Statistics::table(&sf, &sr, "elastokinematic"));
    let links: usize = red.corners.iter().map(|c| c.links.len()).sum();
    let moved: usize = red.corners.iter().map(|c| c.elements.len()).sum();
    // Independent counts: 24 bodies in the file, 18 of them links (9 per side: all but the
    // wheel, the carrier and the anti-roll bar half).
    assert_eq!(sf.bodies, full.bodies.len());
    assert_eq!(links, 18);
    assert_eq!(sr.bodies, full.bodies.len() - links);
    assert_eq!(sr.joint_states, 6 * sr.bodies);
    assert_eq!(sr.first_order_states, 13 * sr.bodies);
    assert_eq!(sr.constraints, 0);
    assert_eq!(sr.macro_links, links);
    assert_eq!(sr.macro_elements, moved);
    assert_eq!(
        sr.force_elements,
        full.force_elements.len() - moved + red.corners.len()
    );
}
