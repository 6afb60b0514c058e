//! Element outputs feeding element input slots: `inputs = { drive_torque = "drive_r1_L.torque" }`
//! in an `[[elements]]` entry connects the slot `drive_torque` of that element (the *sink*) to the
//! output `torque` of the element `drive_r1_L` (the *source*) — a speed controller driving a tire
//! whose wheel spin is an element state, a driveline element feeding several wheels. The target
//! architecture connects elements through named scalar signals (`../shared/design/architecture.md`,
//! "The force-element interface": inputs and outputs); this module is the connection between two
//! elements, where the model inputs connect the outside world.
//!
//! * **Order.** The compiler ([`crate::compile`]) places every source before its sinks in
//!   [`crate::compiled::CompiledModel::open_elements`] (elements that are not fed keep their
//!   order, the fed ones follow in theirs), so one pass of the pipeline evaluates the source and
//!   then reads its output into the sink's slot ([`feed`]). A link is one level deep: a fed
//!   element may not feed another (the partials below would miss the second link's chain
//!   term), which also rules out cycles; both are compile errors naming the elements.
//! * **Partials.** The sink's forces and rates y depend on the source's markers and states z
//!   through the slot value u = o(z): ∂y/∂z = ∂y/∂u · ∂o/∂z, a rank-one block per link
//!   ([`LinkScratch`]), added to the Jacobian as an outer product of the sink's body wrenches
//!   and state rows with the source output's body and state columns. ∂y/∂u comes from [`ElementLaw::input_partials`], ∂o/∂z from
//!   [`ElementLaw::output_partials`]; a kind without them is differenced
//!   ([`crate::element_law::difference_input_partials`],
//!   [`crate::element_law::difference_output_partials`]). The block pattern couples the two
//!   elements' bodies and state blocks
//!   ([`crate::compiled::CompiledModel::coupling_pattern`]).
//! * **Time.** A sink fed by a time-driven source (a time table of its own, a time signal)
//!   depends on time through the slot: its ∂/∂t at fixed markers and states is
//!   ∂y/∂u · ∂o/∂t ([`LinkScratch::time_derivative`], no evaluation), or, when the sink reads
//!   time itself, its central difference with the slot moving by ± h ∂o/∂t ([`feed_time`]).
//!
//! Tested in `crates/sprung-vehicle/tests/element_link.rs`: a speed controller driving two
//! spin-state tires against the same model with the torque from a runtime input (the same
//! numbers), the assembled Jacobian against differences of q, and the compile errors.

use nalgebra::DMatrix;
use sprung_model as sm;

use crate::compiled::OpenElement;
use crate::element_law::{
    ElementInput, ElementLaw, ElementScratch, difference_input_partials, difference_output_partials,
};

/// One input slot of an element fed by another element's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElementLink {
    /// The slot (index into the sink's [`ElementLaw::inputs`]).
    pub slot: usize,
    /// The source element (index into `open_elements`, before the sink).
    pub source: usize,
    /// The source's output (index into its [`ElementLaw::outputs`]).
    pub output: usize,
}

/// Writes the linked slots' values from their sources' last evaluation into `inputs`.
#[inline]
pub fn feed(links: &[ElementLink], source_outputs: impl Fn(usize) -> f64, inputs: &mut [f64]) {
    for (k, l) in links.iter().enumerate() {
        inputs[l.slot] = source_outputs(k);
    }
}

/// The slot values at t ± h of a time-driven sink: each linked slot moves by ± h ∂o/∂t of its
/// source (`d_output_dt(k)` for link k, 0 for a source that does not depend on time).
#[inline]
pub fn feed_time(
    links: &[ElementLink],
    value: &[f64],
    h: f64,
    d_output_dt: impl Fn(usize) -> f64,
    plus: &mut [f64],
    minus: &mut [f64],
) {
    for (k, l) in links.iter().enumerate() {
        let d = d_output_dt(k);
        plus[l.slot] = value[l.slot] + h * d;
        minus[l.slot] = value[l.slot] - h * d;
    }
}

/// Scratch of the link partials of one sink (sized once; nothing allocates per evaluation).
#[derive(Debug, Clone)]
pub struct LinkScratch {
    /// ∂(F, T, ṡ)/∂u of the sink: rows × slots.
    d_inputs: DMatrix<f64>,
    /// Per link: ∂o/∂(δp, δφ) of the source's output (6 m_source).
    out_position: Vec<Vec<f64>>,
    /// Per link: ∂o/∂(δv, δω, s) (6 m_source + n_s source).
    out_velocity: Vec<Vec<f64>>,
}

impl LinkScratch {
    /// Scratch for `sink` fed by `sources` (one law per link, in the order of the links).
    pub fn new(sink: &dyn ElementLaw, sources: &[&dyn ElementLaw]) -> Self {
        let rows = 6 * sink.n_markers() + sink.n_states();
        Self {
            d_inputs: DMatrix::zeros(rows, sink.inputs().len()),
            out_position: sources
                .iter()
                .map(|s| vec![0.0; 6 * s.n_markers()])
                .collect(),
            out_velocity: sources
                .iter()
                .map(|s| vec![0.0; 6 * s.n_markers() + s.n_states()])
                .collect(),
        }
    }

    /// ∂(F, T, ṡ)/∂u of the sink at `x` (analytic where the kind provides it, else each
    /// linked slot differenced).
    pub fn sink_partials(
        &mut self,
        links: &[ElementLink],
        law: &dyn ElementLaw,
        x: &ElementInput,
        scratch: &mut ElementScratch,
    ) {
        self.d_inputs.as_mut_slice().fill(0.0);
        if !law.input_partials(x, &mut self.d_inputs) {
            let n = self.d_inputs.nrows();
            for l in links {
                let col = &mut self.d_inputs.as_mut_slice()[l.slot * n..(l.slot + 1) * n];
                difference_input_partials(law, x, scratch, l.slot, col);
            }
        }
    }

    /// ∂y/∂u_slot of the sink (rows (F₀, T₀, …, ṡ)), from
    /// [`sink_partials`](Self::sink_partials).
    pub fn input_column(&self, slot: usize) -> &[f64] {
        let n = self.d_inputs.nrows();
        &self.d_inputs.as_slice()[slot * n..(slot + 1) * n]
    }

    /// ∂o/∂z of link `k`'s source output at `x` (analytic where the source's kind provides
    /// it, else differenced), read by [`output_row`](Self::output_row).
    pub fn output_partials(
        &mut self,
        k: usize,
        link: &ElementLink,
        law: &dyn ElementLaw,
        x: &ElementInput,
        scratch: &mut ElementScratch,
    ) {
        let (dp, dv) = (&mut self.out_position[k], &mut self.out_velocity[k]);
        dp.fill(0.0);
        dv.fill(0.0);
        if !law.output_partials(x, link.output, dp, dv) {
            difference_output_partials(law, x, scratch, link.output, dp, dv);
        }
    }

    /// Link `k`'s ∂o/∂(δp, δφ) and ∂o/∂(δv, δω, s), in the columns of
    /// [`crate::element_law::ElementJacobian`].
    pub fn output_row(&self, k: usize) -> (&[f64], &[f64]) {
        (&self.out_position[k], &self.out_velocity[k])
    }

    /// ∂(F, T, ṡ)/∂t of the sink through its fed slots alone, Σ ∂y/∂u_slot · ∂o/∂t
    /// (`d_output_dt(k)` for link k), into `d_time`; after
    /// [`sink_partials`](Self::sink_partials) at the same point.
    pub fn time_derivative(
        &self,
        links: &[ElementLink],
        d_output_dt: impl Fn(usize) -> f64,
        d_time: &mut [f64],
    ) {
        d_time.fill(0.0);
        for (k, l) in links.iter().enumerate() {
            let d = d_output_dt(k);
            for (t, y) in d_time.iter_mut().zip(self.input_column(l.slot)) {
                *t += y * d;
            }
        }
    }
}

/// The `[[elements]]` entries in evaluation order: those no link feeds in their file order,
/// then the fed ones in theirs (so every source comes before its sinks). Errors: a link from a
/// fed element (chained or cyclic links), naming the elements.
pub fn evaluation_order(m: &sm::Model) -> Result<Vec<&sm::OpenElement>, String> {
    let sources = |e: &sm::OpenElement| -> Vec<(String, String)> {
        e.inputs
            .iter()
            .filter_map(|(slot, v)| {
                m.element_output_source(v)
                    .map(|(el, _)| (slot.clone(), el.to_string()))
            })
            .collect()
    };
    let fed = |name: &str| {
        m.elements
            .iter()
            .find(|e| e.name == name)
            .is_some_and(|e| !sources(e).is_empty())
    };
    for e in &m.elements {
        for (slot, src) in sources(e) {
            if src == e.name {
                return Err(format!(
                    "element '{}': input slot `{slot}` reads the element's own output (a cycle); map it to an [[inputs]] signal or another element's output",
                    e.name
                ));
            }
            if fed(&src) {
                let cycle = m
                    .elements
                    .iter()
                    .find(|x| x.name == src)
                    .is_some_and(|x| sources(x).iter().any(|(_, s)| *s == e.name));
                return Err(format!(
                    "element '{}': input slot `{slot}` reads an output of '{src}', which is itself fed by another element's output{}; links between elements are one level deep (the partials chain one link) — feed '{}' from a model input or from an element that is not fed",
                    e.name,
                    if cycle {
                        format!(" — '{src}' and '{}' feed each other (a cycle)", e.name)
                    } else {
                        String::new()
                    },
                    e.name
                ));
            }
        }
    }
    let (plain, fed): (Vec<_>, Vec<_>) = m.elements.iter().partition(|e| sources(e).is_empty());
    Ok(plain.into_iter().chain(fed).collect())
}

/// The links of entry `e` (built as `law`) to the elements compiled so far (`compiled`: every
/// source comes first, [`evaluation_order`]). Errors: an unknown output of the source, naming
/// the element, the slot and the outputs the source's kind has.
pub fn resolve(
    m: &sm::Model,
    e: &sm::OpenElement,
    law: &dyn ElementLaw,
    compiled: &[OpenElement],
) -> Result<Vec<ElementLink>, String> {
    let mut links = Vec::new();
    for (k, slot) in law.inputs().iter().enumerate() {
        let Some(value) = e.inputs.get(slot.name) else {
            continue;
        };
        let Some((name, output)) = m.element_output_source(value) else {
            continue;
        };
        let source = compiled
            .iter()
            .position(|c| c.name == name)
            .expect("evaluation_order puts every source first");
        let outputs = compiled[source].law.outputs();
        let Some(o) = outputs.iter().position(|x| x.name == output) else {
            let known: Vec<&str> = outputs.iter().map(|x| x.name).collect();
            return Err(format!(
                "element '{}': input slot `{}` reads '{value}', but element '{name}' (type \"{}\") has no output `{output}`; it has {}",
                e.name,
                slot.name,
                compiled[source].law.kind(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        links.push(ElementLink {
            slot: k,
            source,
            output: o,
        });
    }
    Ok(links)
}
