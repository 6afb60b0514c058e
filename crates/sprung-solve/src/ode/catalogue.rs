//! Method catalogue (document 001, Tabelle 1, plus the Rosenbrock family and Radau IIA) and name
//! parsing.

use super::{Method, OdeError};

/// How a method treats the right-hand side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodKind {
    /// Explicit: only evaluations of `f`.
    Explicit,
    /// Implicit: Newton iterations with a Jacobian.
    Implicit,
    /// Linear-implicit (Rosenbrock): one linear solve per stage, no Newton iteration.
    LinearImplicit,
}

/// Step-size control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepControl {
    /// Constant step only.
    Fixed,
    /// Adaptive step with error control (a fixed step can still be forced for one-step methods).
    Adaptive,
}

/// Catalogue entry.
#[derive(Clone, Copy, Debug)]
pub struct MethodInfo {
    /// Name accepted by [`Method::from_name`].
    pub name: &'static str,
    /// Order of the propagated solution (maximum order for variable-order methods).
    pub order: usize,
    /// Explicit / implicit / linear-implicit.
    pub kind: MethodKind,
    /// Fixed or adaptive step.
    pub step_control: StepControl,
    /// Suitable for stiff problems.
    pub stiff: bool,
    /// One-line description.
    pub description: &'static str,
    /// The method with default settings.
    pub method: Method,
}

use MethodKind::{Explicit, Implicit, LinearImplicit};
use StepControl::{Adaptive, Fixed};

const fn info(
    name: &'static str,
    order: usize,
    kind: MethodKind,
    step_control: StepControl,
    stiff: bool,
    description: &'static str,
    method: Method,
) -> MethodInfo {
    MethodInfo {
        name,
        order,
        kind,
        step_control,
        stiff,
        description,
        method,
    }
}

static CATALOGUE: [MethodInfo; 23] = [
    info(
        "ode1",
        1,
        Explicit,
        Fixed,
        false,
        "explicit Euler",
        Method::Ode1,
    ),
    info(
        "ode2",
        2,
        Explicit,
        Fixed,
        false,
        "Heun (explicit trapezoid)",
        Method::Ode2,
    ),
    info(
        "ode3",
        3,
        Explicit,
        Fixed,
        false,
        "Bogacki-Shampine 3",
        Method::Ode3,
    ),
    info(
        "ode4",
        4,
        Explicit,
        Fixed,
        false,
        "classical Runge-Kutta",
        Method::Ode4,
    ),
    info(
        "ode5",
        5,
        Explicit,
        Fixed,
        false,
        "Dormand-Prince 5",
        Method::Ode5,
    ),
    info(
        "ode8",
        8,
        Explicit,
        Fixed,
        false,
        "Dormand-Prince RK8(7)13M",
        Method::Ode8,
    ),
    info(
        "ode14x",
        4,
        Implicit,
        Fixed,
        true,
        "implicit Euler + Newton + extrapolation (sub-steps 1,2,3,4; default 1 iteration, order 4)",
        Method::Ode14x {
            newton_iters: 1,
            extrapolation_order: 4,
        },
    ),
    info(
        "ode45",
        5,
        Explicit,
        Adaptive,
        false,
        "Dormand-Prince 5(4)",
        Method::Ode45,
    ),
    info(
        "ode23",
        3,
        Explicit,
        Adaptive,
        false,
        "Bogacki-Shampine 3(2)",
        Method::Ode23,
    ),
    info(
        "ode113",
        12,
        Explicit,
        Adaptive,
        false,
        "variable-order Adams-Bashforth-Moulton PECE (orders 1-12)",
        Method::Ode113,
    ),
    info(
        "ode15s",
        5,
        Implicit,
        Adaptive,
        true,
        "variable-order NDF orders 1-5 (BDF with option), Jacobian/LU reuse",
        Method::Ode15s {
            max_order: 5,
            bdf: false,
        },
    ),
    info(
        "ode23s",
        2,
        LinearImplicit,
        Adaptive,
        true,
        "modified Rosenbrock 2(3) (Shampine-Reichelt)",
        Method::Ode23s,
    ),
    info(
        "ode23t",
        2,
        Implicit,
        Adaptive,
        true,
        "trapezoidal rule",
        Method::Ode23t,
    ),
    info(
        "ode23tb",
        2,
        Implicit,
        Adaptive,
        true,
        "TR-BDF2 (Hosea-Shampine)",
        Method::Ode23tb,
    ),
    info(
        "lsrt2",
        2,
        LinearImplicit,
        Fixed,
        true,
        "LSRT2 two-stage Rosenbrock (Bursi et al.), L-stable W-method",
        Method::Lsrt2,
    ),
    info(
        "lie",
        1,
        LinearImplicit,
        Fixed,
        true,
        "linear-implicit Euler",
        Method::Lie,
    ),
    info(
        "ros2",
        2,
        LinearImplicit,
        Adaptive,
        true,
        "ROS2 (Verwer) 2(1), L-stable",
        Method::Ros2,
    ),
    info(
        "ros3p",
        3,
        LinearImplicit,
        Adaptive,
        true,
        "ROS3P (Lang-Verwer) 3(2), A-stable",
        Method::Ros3p,
    ),
    info(
        "ros34pw2",
        3,
        LinearImplicit,
        Adaptive,
        true,
        "ROS34PW2 (Rang-Angermann) 3(2), L-stable W-method",
        Method::Ros34pw2,
    ),
    info(
        "rodas3",
        3,
        LinearImplicit,
        Adaptive,
        true,
        "RODAS3 (Sandu et al.) 3(2), stiffly accurate",
        Method::Rodas3,
    ),
    info(
        "rodas4",
        4,
        LinearImplicit,
        Adaptive,
        true,
        "RODAS4 (Hairer-Wanner) 4(3), stiffly accurate",
        Method::Rodas4,
    ),
    info(
        "rodas5p",
        5,
        LinearImplicit,
        Adaptive,
        true,
        "Rodas5P (Steinebach) 5(4), stiffly accurate",
        Method::Rodas5p,
    ),
    info(
        "radau5",
        5,
        Implicit,
        Adaptive,
        true,
        "Radau IIA 3 stages, simplified Newton (high-accuracy reference)",
        Method::Radau5,
    ),
];

/// All methods of the suite.
pub fn catalogue() -> &'static [MethodInfo] {
    &CATALOGUE
}

impl Method {
    /// Parses a catalogue name (case-insensitive). Parameter variants accept suffixes:
    /// `ode15s-bdf` (BDF instead of NDF), `ode14x:<newton_iters>:<order>` (e.g. `ode14x:2:3`).
    pub fn from_name(name: &str) -> Result<Method, OdeError> {
        let lower = name.trim().to_ascii_lowercase();
        let unknown = || OdeError::UnknownMethod {
            name: name.to_string(),
            valid: format!(
                "{}, ode15s-bdf, ode14x:<iters>:<order>",
                CATALOGUE
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if lower == "ode15s-bdf" {
            return Ok(Method::Ode15s {
                max_order: 5,
                bdf: true,
            });
        }
        if let Some(rest) = lower.strip_prefix("ode14x:") {
            let parts: Vec<&str> = rest.split(':').collect();
            if parts.len() != 2 {
                return Err(unknown());
            }
            let it: usize = parts[0].parse().map_err(|_| unknown())?;
            let ord: usize = parts[1].parse().map_err(|_| unknown())?;
            if it == 0 || !(1..=4).contains(&ord) {
                return Err(OdeError::InvalidInput(format!(
                    "ode14x needs newton_iters >= 1 and extrapolation order 1..=4, got {it}:{ord}"
                )));
            }
            return Ok(Method::Ode14x {
                newton_iters: it,
                extrapolation_order: ord,
            });
        }
        let alias = match lower.as_str() {
            "radauiia" | "radau" | "radau-iia" => "radau5",
            "linear-implicit-euler" | "linimpeuler" => "lie",
            other => other,
        };
        CATALOGUE
            .iter()
            .find(|m| m.name == alias)
            .map(|m| m.method)
            .ok_or_else(unknown)
    }

    /// Catalogue name of this method (e.g. `"ode45"`, `"rodas4"`).
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// Catalogue entry of this method (settings of parameterised variants are ignored).
    pub fn info(&self) -> &'static MethodInfo {
        let same =
            |m: &MethodInfo| std::mem::discriminant(&m.method) == std::mem::discriminant(self);
        CATALOGUE
            .iter()
            .find(|m| same(m))
            .expect("every method is in the catalogue")
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Method::Ode14x {
                newton_iters,
                extrapolation_order,
            } if (*newton_iters, *extrapolation_order) != (1, 4) => {
                write!(f, "ode14x:{newton_iters}:{extrapolation_order}")
            }
            Method::Ode15s { bdf: true, .. } => f.write_str("ode15s-bdf"),
            m => f.write_str(m.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_names() {
        for m in catalogue() {
            assert_eq!(Method::from_name(m.name).unwrap(), m.method);
            assert_eq!(m.method.info().name, m.name);
            assert_eq!(m.method.name(), m.name);
            assert_eq!(m.method.to_string(), m.name);
        }
        assert_eq!(Method::from_name("ODE45").unwrap(), Method::Ode45);
        assert_eq!(
            Method::from_name("ode14x:3:2").unwrap(),
            Method::Ode14x {
                newton_iters: 3,
                extrapolation_order: 2
            }
        );
        for m in [
            Method::Ode15s {
                max_order: 5,
                bdf: true,
            },
            Method::Ode14x {
                newton_iters: 2,
                extrapolation_order: 3,
            },
        ] {
            assert_eq!(Method::from_name(&m.to_string()).unwrap(), m);
        }
        let e = Method::from_name("ode99").unwrap_err().to_string();
        assert!(e.contains("ode45") && e.contains("rodas5p") && e.contains("ode99"));
    }
}
