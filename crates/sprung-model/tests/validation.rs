//! Every bad-input case of the validation: the message names the file, the line where the
//! element is defined, the element name, and what is wrong. All problems are collected.

use sprung_model::{ModelError, from_json_str, from_toml_str};

const BASE: &str = include_str!("common_base.toml");
const FILE: &str = "bad_model.toml";

/// 1-based line of the first line containing `pat`.
fn line_of(src: &str, pat: &str) -> usize {
    src.lines()
        .position(|l| l.contains(pat))
        .unwrap_or_else(|| panic!("pattern {pat:?} not in source"))
        + 1
}

/// Replace the first occurrence of `from` (must exist).
fn edit(src: &str, from: &str, to: &str) -> String {
    assert!(src.contains(from), "pattern {from:?} not in source");
    src.replacen(from, to, 1)
}

/// Replace the first occurrence of `from` after the line containing `anchor`.
fn edit_after(src: &str, anchor: &str, from: &str, to: &str) -> String {
    let a = src
        .find(anchor)
        .unwrap_or_else(|| panic!("anchor {anchor:?} missing"));
    let p = a + src[a..]
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} missing after {anchor:?}"));
    format!("{}{}{}", &src[..p], to, &src[p + from.len()..])
}

/// Assert that loading fails with a problem line for element `name` at the line of `def_pat`
/// that contains all `needles`. Returns the full message.
fn check(src: &str, name: &str, def_pat: &str, needles: &[&str]) -> String {
    check_at(src, name, line_of(src, def_pat), needles)
}

/// As [`check`] with an explicit line.
fn check_at(src: &str, name: &str, line: usize, needles: &[&str]) -> String {
    let err = from_toml_str(src, FILE).expect_err("model should be invalid");
    let msg = err.to_string();
    let loc = format!("{FILE}:{line}:");
    let quoted = format!("'{name}'");
    assert!(
        msg.lines().any(|l| l.contains(&loc)
            && l.contains(&quoted)
            && needles.iter().all(|n| l.contains(n))),
        "expected a problem at {loc} for {quoted} containing {needles:?}, got:\n{msg}"
    );
    assert!(msg.contains("fix:"), "message lacks a fix hint:\n{msg}");
    msg
}

fn name_line(name: &str) -> String {
    format!("name = \"{name}\"")
}

#[test]
fn base_model_is_valid() {
    let m = from_toml_str(BASE, FILE).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.bodies.len(), 4);
    assert_eq!(m.markers.len(), 10);
    assert_eq!(m.force_elements.len(), 10);
    assert_eq!(m.inputs.len(), 4);
    assert_eq!(m.outputs.len(), 7);
}

#[test]
fn duplicate_names() {
    let src = edit(BASE, "name = \"C_STOP\"", "name = \"C_RAD\"");
    check_at(
        &src,
        "C_RAD",
        line_of(&src, "x = [0.0, 0.01, 0.02]") - 1,
        &["more than once"],
    );
    // The duplicate is reported at the second definition.
    let src = edit(
        BASE,
        "[[bodies]]\nname = \"wheel_L\"",
        "[[bodies]]\nname = \"arm_L\"",
    );
    let err = from_toml_str(&src, FILE).unwrap_err().to_string();
    let second = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("name = \"arm_L\""))
        .nth(1)
        .unwrap()
        .0
        + 1;
    assert!(
        err.contains(&format!("{FILE}:{second}: body 'arm_L'")),
        "{err}"
    );
    // A mirrored copy colliding with an explicit item.
    let src = edit(BASE, "name = \"wheel_w\"", "name = \"wc_dz_R\"");
    check(&src, "wc_dz_R", "name = \"wc_dz_R\"", &["more than once"]);
}

#[test]
fn ground_name_collides_with_body() {
    let src = edit(BASE, "ground = \"chassis\"", "ground = \"arm_L\"");
    check(&src, "arm_L", &name_line("arm_L"), &["ground"]);
}

#[test]
fn unknown_references() {
    let src = edit_after(
        BASE,
        "name = \"top_L\"",
        "body = \"chassis\"",
        "body = \"chasis\"",
    );
    check(
        &src,
        "top_L",
        &name_line("top_L"),
        &["unknown body 'chasis'", "did you mean 'chassis'?"],
    );
    let src = edit_after(
        BASE,
        "name = \"spring_L\"",
        "marker_i = \"top_L\"",
        "marker_i = \"top\"",
    );
    check(
        &src,
        "spring_L",
        &name_line("spring_L"),
        &["unknown marker 'top'"],
    );
    let src = edit_after(
        BASE,
        "name = \"arm_inner_L.I\"",
        "frame = \"F01\"",
        "frame = \"F99\"",
    );
    check(
        &src,
        "arm_inner_L.I",
        &name_line("arm_inner_L.I"),
        &["unknown frame 'F99'"],
    );
    let src = edit(
        BASE,
        "stiffness_curves = { x = \"C_RAD\"",
        "stiffness_curves = { x = \"C_RADX\"",
    );
    check(
        &src,
        "arm_inner_L",
        "name = \"arm_inner_L\"",
        &["unknown curve 'C_RADX'"],
    );
    // The mirrored copy is reported too, at the line of the original.
    check(
        &src,
        "arm_inner_R",
        "name = \"arm_inner_L\"",
        &["unknown curve 'C_RADX'"],
    );
    let src = edit(BASE, "element = \"spring_L\"", "element = \"spring_X\"");
    check(
        &src,
        "spring_len_L",
        &name_line("spring_len_L"),
        &[
            "unknown force element 'spring_X'",
            "did you mean 'spring_L'?",
        ],
    );
    let src = edit(
        BASE,
        "marker = \"bearing_L.I\"\ncomponent",
        "marker = \"nope\"\ncomponent",
    );
    check(
        &src,
        "wc_dz_L",
        &name_line("wc_dz_L"),
        &["unknown marker 'nope'"],
    );
    let src = edit(
        BASE,
        "body = \"wheel_L\"\ncomponent",
        "body = \"chassis\"\ncomponent",
    );
    check(
        &src,
        "wheel_w",
        &name_line("wheel_w"),
        &["unknown body 'chassis'"],
    );
    let src = edit(
        BASE,
        "marker = \"bearing_L.I\"\ndirection = [0.0, 1.0, 1.0]",
        "marker = \"bearing.I\"\ndirection = [0.0, 1.0, 1.0]",
    );
    check(
        &src,
        "Fz_L",
        &name_line("Fz_L"),
        &["unknown marker 'bearing.I'"],
    );
}

#[test]
fn mass_must_be_positive() {
    let src = edit(BASE, "mass = 2.5", "mass = 0.0");
    check(
        &src,
        "arm_L",
        &name_line("arm_L"),
        &["mass = 0 is not positive"],
    );
    check(&src, "arm_R", &name_line("arm_L"), &["mass"]);
    let src = edit(BASE, "mass = 2.5", "mass = -1.0");
    check(&src, "arm_L", &name_line("arm_L"), &["mass = -1"]);
}

#[test]
fn inertia_checks() {
    let src = edit(
        BASE,
        "[[0.02, -0.001, 0.0], [-0.001,",
        "[[0.02, -0.001, 0.0], [0.001,",
    );
    check(&src, "arm_L", &name_line("arm_L"), &["not symmetric"]);
    let src = edit(
        BASE,
        "principal = [0.6, 1.0, 0.6]",
        "principal = [0.6, -1.0, 0.6]",
    );
    check(
        &src,
        "wheel_L",
        &name_line("wheel_L"),
        &["not positive definite"],
    );
    let src = edit(
        BASE,
        "principal = [0.6, 1.0, 0.6]",
        "principal = [0.3, 1.0, 0.6]",
    );
    check(
        &src,
        "wheel_L",
        &name_line("wheel_L"),
        &["triangle inequality"],
    );
    // Tensor form: diag(1, 1, 3) is positive definite but violates the triangle inequality.
    let src = edit(
        BASE,
        "[[0.02, -0.001, 0.0], [-0.001, 0.005, 0.0], [0.0, 0.0, 0.024]]",
        "[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]",
    );
    check(&src, "arm_L", &name_line("arm_L"), &["triangle inequality"]);
    let src = edit(
        BASE,
        "[[0.02, -0.001, 0.0], [-0.001, 0.005, 0.0], [0.0, 0.0, 0.024]]",
        "[[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]",
    );
    check(
        &src,
        "arm_L",
        &name_line("arm_L"),
        &["not positive definite"],
    );
    let src = edit(
        BASE,
        "inertia = { principal = [0.6, 1.0, 0.6], euler_zyx_deg = [5.0, 0.0, 0.0] }",
        "inertia = { }",
    );
    check(
        &src,
        "wheel_L",
        &name_line("wheel_L"),
        &["neither `tensor` nor `principal`"],
    );
    let src = edit(
        BASE,
        "inertia = { principal = [0.6, 1.0, 0.6],",
        "inertia = { tensor = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], principal = [0.6, 1.0, 0.6],",
    );
    check(
        &src,
        "wheel_L",
        &name_line("wheel_L"),
        &["both `tensor` and `principal`"],
    );
}

#[test]
fn curve_checks() {
    let src = edit(BASE, "x = [0.0, 0.01, 0.02]", "x = [0.0, 0.02, 0.01]");
    check(
        &src,
        "C_STOP",
        &name_line("C_STOP"),
        &["not strictly increasing"],
    );
    let src = edit(
        BASE,
        "x = [0.0, 0.01, 0.02]\ny = [0.0, 1000.0, 5000.0]",
        "x = [0.0]\ny = [0.0]",
    );
    check(
        &src,
        "C_STOP",
        &name_line("C_STOP"),
        &["1 point(s)", "at least 2"],
    );
    let src = edit(BASE, "x = [0.0, 0.01, 0.02]", "x = [0.0, 0.01]");
    check(
        &src,
        "C_STOP",
        &name_line("C_STOP"),
        &["same number of points"],
    );
    let src = edit(
        BASE,
        "x = [0.0, 1e-3, 2e-3, 4e-3]",
        "x = [-1e-3, 1e-3, 2e-3, 4e-3]",
    );
    check(&src, "C_RAD", &name_line("C_RAD"), &["odd", "(0, 0)"]);
    let src = edit(
        BASE,
        "y = [0.0, 1000.0, 2500.0, 8000.0]",
        "y = [5.0, 1000.0, 2500.0, 8000.0]",
    );
    check(&src, "C_RAD", &name_line("C_RAD"), &["odd"]);
}

#[test]
fn frame_axes_checks() {
    let src = edit(
        BASE,
        "x = [0.268312, -0.963332, 0.000000]",
        "x = [0.27, -0.963332, 0.000000]",
    );
    check(&src, "F01", &name_line("F01"), &["not orthonormal", "1e-4"]);
    let src = edit(
        BASE,
        "z = [0.088860, 0.024750, 0.995737]",
        "z = [-0.088860, -0.024750, -0.995737]",
    );
    check(&src, "F01", &name_line("F01"), &["left-handed"]);
    let src = edit(
        BASE,
        "y = [0.0, 1.0, 0.0], z = [0.0, 0.0, 1.0] }",
        "y = [0.0, 1.0, 0.0], z = [0.0, 0.0, -1.0] }",
    );
    check(
        &src,
        "bearing_L.J",
        &name_line("bearing_L.J"),
        &["left-handed"],
    );
    // Within tolerance: accepted and orthonormalised exactly.
    let src = edit(
        BASE,
        "x = [0.268312, -0.963332, 0.000000]",
        "x = [0.26832, -0.963332, 0.000000]",
    );
    let m = from_toml_str(&src, FILE).unwrap();
    let a = m.frame("F01").unwrap().rotation();
    assert!(sprung_model::rot::orthonormality_error(&a) < 1e-15);
    let src = edit(
        BASE,
        "euler_zyx_deg = [10.0, 20.0, 30.0]",
        "euler_zyx_deg = [10.0, 20.0, 30.0]\naxes = { x = [1.0, 0.0, 0.0], y = [0.0, 1.0, 0.0], z = [0.0, 0.0, 1.0] }",
    );
    check(
        &src,
        "FE",
        &name_line("FE"),
        &["both `axes` and `euler_zyx_deg`"],
    );
}

#[test]
fn negative_coefficients() {
    let src = edit(
        BASE,
        "stiffness = [5e6, 1.5e6, 5e6]",
        "stiffness = [5e6, -1.5e6, 5e6]",
    );
    check(
        &src,
        "arm_inner_L",
        "name = \"arm_inner_L\"",
        &["`stiffness`", "negative"],
    );
    let src = edit(
        BASE,
        "damping = [5000.0, 1500.0, 5000.0]",
        "damping = [5000.0, 1500.0, -5000.0]",
    );
    check(
        &src,
        "arm_inner_L",
        "name = \"arm_inner_L\"",
        &["`damping`", "negative"],
    );
    let src = edit(BASE, "clearance = 0.04", "clearance = -0.04");
    check(
        &src,
        "bump_L",
        &name_line("bump_L"),
        &["`clearance`", "negative"],
    );
    let src = edit(BASE, "stiffness = 8.5e4", "stiffness = -8.5e4");
    check(
        &src,
        "spring_L",
        &name_line("spring_L"),
        &["`stiffness`", "negative"],
    );
    let src = edit(
        BASE,
        "damping_compression = 1000.0",
        "damping_compression = -1000.0",
    );
    check(
        &src,
        "damper_L",
        &name_line("damper_L"),
        &["damping_compression", "negative"],
    );
    let src = edit(BASE, "free_length = 0.45", "free_length = 0.0");
    check(&src, "spring_L", &name_line("spring_L"), &["free_length"]);
}

#[test]
fn spin_axis_with_stiffness() {
    let src = edit(
        BASE,
        "rot_stiffness = [5e5, 0.0, 5e5]",
        "rot_stiffness = [5e5, 10.0, 5e5]",
    );
    check(
        &src,
        "bearing_L",
        "name = \"bearing_L\"",
        &["spin_axis = \"y\"", "rot_stiffness"],
    );
    let src = edit(
        BASE,
        "spin_axis = \"y\"",
        "spin_axis = \"y\"\nrot_stiffness_curves = { y = \"C_RAD\" }",
    );
    check(
        &src,
        "bearing_L",
        "name = \"bearing_L\"",
        &["rot_stiffness_curves.y"],
    );
}

#[test]
fn exclusive_alternatives() {
    let src = edit(
        BASE,
        "position = [0.0, 0.0, 0.0]\neuler_zyx_deg = [0.0, 0.0, -2.0]",
        "global_position = [0.0, 0.75, 0.0]\nposition = [0.0, 0.0, 0.0]\neuler_zyx_deg = [0.0, 0.0, -2.0]",
    );
    check(
        &src,
        "bearing_L.I",
        &name_line("bearing_L.I"),
        &["both `global_position` and `position`"],
    );
    let src = edit(
        BASE,
        "position = [0.0, 0.0, 0.0]\neuler_zyx_deg = [0.0, 0.0, -2.0]",
        "euler_zyx_deg = [0.0, 0.0, -2.0]",
    );
    check(
        &src,
        "bearing_L.I",
        &name_line("bearing_L.I"),
        &["neither `global_position` nor `position`"],
    );
    let src = edit(
        BASE,
        "position = [0.0, 0.0, 0.0]\neuler_zyx_deg = [0.0, 0.0, -2.0]",
        "position = [0.0, 0.0, 0.0]\neuler_zyx_deg = [0.0, 0.0, -2.0]\nframe = \"F01\"",
    );
    check(
        &src,
        "bearing_L.I",
        &name_line("bearing_L.I"),
        &["more than one of `frame`"],
    );
    let src = edit(
        BASE,
        "stiffness = 8.5e4",
        "stiffness = 8.5e4\ncurve = \"C_STOP\"",
    );
    check(
        &src,
        "spring_L",
        &name_line("spring_L"),
        &["more than one of `stiffness` / `curve`"],
    );
    let src = edit(BASE, "stiffness = 8.5e4\n", "");
    check(
        &src,
        "spring_L",
        &name_line("spring_L"),
        &["none of `stiffness` / `curve`"],
    );
    let src = edit(
        BASE,
        "damping_rebound = 2000.0\ndamping_compression = 1000.0",
        "",
    );
    check(
        &src,
        "damper_L",
        &name_line("damper_L"),
        &["none of `damping`"],
    );
    let src = edit(
        BASE,
        "damping_compression = 1000.0",
        "damping_compression = 1000.0\ndamping = 3.0",
    );
    check(
        &src,
        "damper_L",
        &name_line("damper_L"),
        &["more than one of"],
    );
    let src = edit(BASE, "damping_compression = 1000.0\n", "");
    check(&src, "damper_L", &name_line("damper_L"), &["needs both"]);
    let src = edit(
        BASE,
        "curve = \"C_STOP\"",
        "curve = \"C_STOP\"\nstiffness = 1e5",
    );
    check(
        &src,
        "bump_L",
        &name_line("bump_L"),
        &["more than one of `curve` / `stiffness`"],
    );
    let src = edit(
        BASE,
        "element = \"spring_L\"",
        "element = \"spring_L\"\nmarker = \"top_L\"",
    );
    check(
        &src,
        "spring_len_L",
        &name_line("spring_len_L"),
        &["more than one of `marker` / `body` / `element`"],
    );
}

#[test]
fn non_finite_numbers() {
    let src = edit(
        BASE,
        "position = [0.0, 0.5, 0.0]",
        "position = [0.0, nan, 0.0]",
    );
    check(
        &src,
        "arm_L",
        &name_line("arm_L"),
        &["`position`", "non-finite"],
    );
    let src = edit(
        BASE,
        "gravity = [0.0, 0.0, -9.81]",
        "gravity = [0.0, 0.0, -inf]",
    );
    check(&src, "base", &name_line("base"), &["gravity", "non-finite"]);
    let src = edit(
        BASE,
        "stiffness = [1e8, 5e7, 1e8]",
        "stiffness = [1e8, inf, 1e8]",
    );
    check(&src, "bearing_L", "name = \"bearing_L\"", &["non-finite"]);
    let src = edit(BASE, "y = [0.0, 1000.0, 5000.0]", "y = [0.0, nan, 5000.0]");
    check(&src, "C_STOP", &name_line("C_STOP"), &["non-finite"]);
    let src = edit(BASE, "to = 10.0", "to = inf");
    check(&src, "My_L", &name_line("My_L"), &["non-finite"]);
}

#[test]
fn solver_checks() {
    let src = edit(BASE, "step = 1e-3", "step = 0.0");
    check(
        &src,
        "solver",
        "[solver]",
        &["step = 0 is not a positive finite number"],
    );
    let src = edit(BASE, "t_end = 0.5", "t_end = -1.0");
    check(
        &src,
        "solver",
        "[solver]",
        &["t_end = -1 is not a positive finite number"],
    );
    let src = edit(BASE, "t_end = 0.5", "t_end = 0.5\noutput_interval = 1e-4");
    check(
        &src,
        "solver",
        "[solver]",
        &["output_interval = 0.0001 is smaller than the step 0.001"],
    );
    let src = edit(BASE, "t_end = 0.5", "t_end = 0.5\nrelinearise_every = 0");
    check(&src, "solver", "[solver]", &["relinearise_every"]);
}

#[test]
fn output_quantity_applicability() {
    let src = edit(BASE, "quantity = \"length\"", "quantity = \"torque\"");
    check(
        &src,
        "spring_len_L",
        &name_line("spring_len_L"),
        &["\"torque\" is not applicable to the spring 'spring_L'"],
    );
    let src = edit(
        BASE,
        "quantity = \"force\"\nelement = \"arm_inner_L\"",
        "quantity = \"length\"\nelement = \"arm_inner_L\"",
    );
    check(
        &src,
        "bush_F_L",
        &name_line("bush_F_L"),
        &["\"length\" is not applicable to the bushing"],
    );
    let src = edit(BASE, "quantity = \"displacement\"", "quantity = \"force\"");
    check(
        &src,
        "wc_dz_L",
        &name_line("wc_dz_L"),
        &["applies to a force element"],
    );
    let src = edit(
        BASE,
        "quantity = \"force\"\nelement = \"arm_inner_L\"",
        "quantity = \"velocity\"\nelement = \"arm_inner_L\"",
    );
    check(
        &src,
        "bush_F_L",
        &name_line("bush_F_L"),
        &["applies to a marker or body"],
    );
    let src = edit(
        BASE,
        "element = \"spring_L\"",
        "element = \"spring_L\"\ncomponent = \"y\"",
    );
    check(
        &src,
        "spring_len_L",
        &name_line("spring_len_L"),
        &["scalar"],
    );
}

#[test]
fn input_checks() {
    let src = edit(
        BASE,
        "marker = \"bearing_L.I\"\ndirection = [0.0, 1.0, 1.0]",
        "marker = \"top_L\"\ndirection = [0.0, 1.0, 1.0]",
    );
    check(
        &src,
        "Fz_L",
        &name_line("Fz_L"),
        &["on the ground 'chassis'"],
    );
    let src = edit(
        BASE,
        "direction = [0.0, 1.0, 1.0]",
        "direction = [0.0, 0.0, 0.0]",
    );
    check(&src, "Fz_L", &name_line("Fz_L"), &["zero vector"]);
    check(&src, "Fz_R", &name_line("Fz_L"), &["zero vector"]);
    let src = edit(BASE, "t = [0.0, 0.1, 0.2]", "t = [0.0, 0.2, 0.2]");
    check(
        &src,
        "Fz_L",
        &name_line("Fz_L"),
        &["not strictly increasing"],
    );
    let src = edit(
        BASE,
        "start_time = 0.1, end_time = 0.2",
        "start_time = 0.3, end_time = 0.2",
    );
    check(&src, "My_L", &name_line("My_L"), &["end_time"]);
}

#[test]
fn mirror_name_without_suffix() {
    let src = edit(
        BASE,
        "name = \"wheel_w\"",
        "name = \"wheel_w\"\nmirror = true",
    );
    check(&src, "wheel_w", &name_line("wheel_w"), &["no `_L` suffix"]);
}

#[test]
fn element_between_one_body_and_coincident_p2p() {
    let src = edit_after(
        BASE,
        "name = \"damper_L\"",
        "marker_i = \"top_L\"",
        "marker_i = \"arm_inner_L.J\"",
    );
    check(&src, "damper_L", &name_line("damper_L"), &["coincide"]);
    let src = edit_after(
        BASE,
        "name = \"damper_L\"",
        "marker_i = \"top_L\"",
        "marker_i = \"bearing_L.J\"",
    );
    check(
        &src,
        "damper_L",
        &name_line("damper_L"),
        &["same body 'arm_L'"],
    );
}

#[test]
fn all_problems_are_collected() {
    let mut src = edit(BASE, "mass = 2.5", "mass = -2.5");
    src = edit(&src, "step = 1e-3", "step = -1e-3");
    src = edit(&src, "x = [0.0, 0.01, 0.02]", "x = [0.0, 0.02, 0.01]");
    src = edit(
        &src,
        "direction = [0.0, 1.0, 1.0]",
        "direction = [0.0, 0.0, 0.0]",
    );
    let err = from_toml_str(&src, FILE).unwrap_err();
    let ModelError::Invalid { problems, .. } = &err else {
        panic!("{err}")
    };
    // mass (L and R), step, curve, direction (L and R)
    assert_eq!(problems.len(), 6, "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("model file bad_model.toml has 6 problems:"),
        "{msg}"
    );
}

#[test]
fn json_problems_have_lines() {
    // Convert a broken TOML model to pretty JSON and check that JSON lines are reported.
    let src = edit(BASE, "mass = 2.5", "mass = 0.0");
    let v: toml::Value = toml::from_str(&src).unwrap();
    let json = serde_json::to_string_pretty(&v).unwrap();
    let err = from_json_str(&json, "bad.json").unwrap_err().to_string();
    let line = line_of(&json, "\"name\": \"arm_L\"");
    assert!(
        err.contains(&format!("bad.json:{line}: body 'arm_L'")),
        "{err}"
    );
    let line = line_of(&json, "\"step\"");
    let src = edit(BASE, "step = 1e-3", "step = 0.0");
    let v: toml::Value = toml::from_str(&src).unwrap();
    let json = serde_json::to_string_pretty(&v).unwrap();
    let err = from_json_str(&json, "bad.json").unwrap_err().to_string();
    let solver_line = line_of(&json, "\"solver\"");
    assert!(
        err.contains(&format!("bad.json:{solver_line}: solver")),
        "{err} (step at {line})"
    );
}

#[test]
fn syntax_errors_name_file_line_column() {
    let cases = [
        (
            "mass = 2.5",
            "mass = 2.5\nmas = 1.0",
            "mas = 1.0",
            "unknown field `mas`",
        ),
        (
            "mass = 2.5",
            "mass = \"heavy\"",
            "mass = \"heavy\"",
            "invalid type",
        ),
        (
            "clearance = 0.04",
            "clearance = 0.04\nclearence = 0.1",
            "clearence = 0.1",
            "unknown field `clearence`",
        ),
        (
            "type = \"damper\"",
            "type = \"dampr\"",
            "type = \"dampr\"",
            "unknown variant `dampr`",
        ),
        (
            "to = 10.0 }",
            "to = 10.0, slope = 1.0 }",
            "slope = 1.0",
            "unknown field `slope`",
        ),
    ];
    for (from, to, at, needle) in cases {
        let src = edit(BASE, from, to);
        let err = from_toml_str(&src, FILE).unwrap_err();
        assert!(matches!(err, ModelError::Syntax { .. }), "{err}");
        let msg = err.to_string();
        let line = line_of(&src, at);
        assert!(
            msg.starts_with(&format!("{FILE}:{line}:")),
            "expected line {line}: {msg}"
        );
        assert!(msg.contains(needle), "{msg}");
    }
    // The enclosing element is named.
    let src = edit(
        BASE,
        "clearance = 0.04",
        "clearance = 0.04\nclearence = 0.1",
    );
    let msg = from_toml_str(&src, FILE).unwrap_err().to_string();
    assert!(msg.contains("(in [[force_elements]] #5 'bump_L')"), "{msg}");
    // Missing field: reported at the element's table.
    let src = edit(BASE, "mass = 2.5\n", "");
    let msg = from_toml_str(&src, FILE).unwrap_err().to_string();
    assert!(
        msg.contains("missing field `mass`") && msg.starts_with(&format!("{FILE}:")),
        "{msg}"
    );
    // JSON: unknown field inside a tagged force element points at the key.
    let v: toml::Value = toml::from_str(BASE).unwrap();
    let json =
        serde_json::to_string_pretty(&v)
            .unwrap()
            .replacen("\"clearance\"", "\"clearence\"", 1);
    let msg = from_json_str(&json, "m.json").unwrap_err().to_string();
    let line = line_of(&json, "\"clearence\"");
    assert!(
        msg.starts_with(&format!("m.json:{line}:")) && msg.contains("unknown field `clearence`"),
        "{msg}"
    );
    let msg = from_json_str("{\"model\": {\"name\": 3}}", "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("m.json:1:") && msg.contains("invalid type"),
        "{msg}"
    );
}

#[test]
fn unsupported_extension_and_missing_file() {
    let e = sprung_model::load(std::path::Path::new("model.yaml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("model.yaml") && e.contains(".toml") && e.contains(".json"),
        "{e}"
    );
    let e = sprung_model::load(std::path::Path::new("/nonexistent/model.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/model.toml"), "{e}");
}

/// A wrong type inside an `[[elements]]` item is reported at that item's key line with its
/// number and name, like the other arrays.
#[test]
fn wrong_type_in_an_open_element_is_located() {
    let text = sprung_test_support::model_text("maxwell_solid.toml").replace(
        r#"markers = ["mass_point", "anchor"]"#,
        r#"markers = "mass_point""#,
    );
    let line = text
        .lines()
        .position(|l| l.starts_with(r#"markers = "mass_point""#))
        .unwrap()
        + 1;
    let e = sprung_model::from_toml_str(&text, "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("m.toml:{line}:")) && e.contains("[[elements]] #1 'maxwell'"),
        "{e}"
    );
}
