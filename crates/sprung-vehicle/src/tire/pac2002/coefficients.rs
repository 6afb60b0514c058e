//! The PAC2002 (MF-Tyre 5.2) coefficients of a `.tir` file: which sections and keys the model
//! reads, their defaults, which are required, the unit check, and located errors for unknown or
//! missing keys (`docs/tire-pac2002.md`, "The .tir parser").
//!
//! Key names and meanings follow the MF-Tyre 5.2 / PAC2002 property-file layout (Pacejka, *Tire
//! and Vehicle Dynamics*, 2nd ed., ch. 4, and the MF-Tyre 5.2 equation manual); the comments of
//! the two shared files (`../shared/data/vehicle-reference.md`, "Pacejka 2002") give the same.

use super::tir::{TirError, TirFile, TirValue};

/// What a key needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Need {
    /// Must be given.
    Required,
    /// Takes this value when absent.
    Default(f64),
    /// May be absent (stored as NaN; the model says what it uses instead).
    Optional,
    /// Known, accepted and not used by this model (documented).
    Unused,
}

/// A known numeric key.
#[derive(Debug, Clone, Copy)]
pub struct KeyInfo {
    /// Section (upper case, no brackets).
    pub section: &'static str,
    /// Key.
    pub key: &'static str,
    /// Whether required, default.
    pub need: Need,
    /// Meaning and unit.
    pub doc: &'static str,
}

macro_rules! coefficients {
    ($( $section:literal { $( $field:ident $key:literal $need:expr, $doc:literal; )* } )*) => {
        /// The numeric coefficients of a PAC2002 `.tir` file (SI units; field = key in lower case).
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub struct Coefficients {
            $( $( #[doc = $doc] pub $field: f64, )* )*
        }

        /// Every numeric key the model knows, by section.
        pub const KNOWN_KEYS: &[KeyInfo] = &[
            $( $( KeyInfo { section: $section, key: $key, need: $need, doc: $doc }, )* )*
        ];

        impl Coefficients {
            fn slot(&mut self, key: &str) -> Option<&mut f64> {
                match key {
                    $( $( $key => Some(&mut self.$field), )* )*
                    _ => None,
                }
            }
            fn blank() -> Self {
                Self { $( $( $field: f64::NAN, )* )* }
            }
        }
    };
}

use Need::{Default as D, Optional as O, Required as R, Unused as U};

coefficients! {
    "MODEL" {
        use_mode "USE_MODE" D(4.0), "tyre use switch: 1 Fx,My; 2 Fy,Mx,Mz; 3 uncombined; 4 combined (+10 relaxation: states are always used here)";
        vxlow "VXLOW" D(1.0), "speed below which the low-speed treatment acts, m/s";
        longvl "LONGVL" D(16.7), "measurement speed (reference speed of the rolling resistance), m/s";
        fittyp "FITTYP" U, "fitting type of the tyre vendor's tool (not used)";
        mfsafe1 "MFSAFE1" U, "vendor safety code (not used)";
        mfsafe2 "MFSAFE2" U, "vendor safety code (not used)";
        mfsafe3 "MFSAFE3" U, "vendor safety code (not used)";
    }
    "DIMENSION" {
        unloaded_radius "UNLOADED_RADIUS" R, "free tyre radius R0, m";
        width "WIDTH" R, "nominal section width, m";
        aspect_ratio "ASPECT_RATIO" U, "nominal aspect ratio (not used)";
        rim_radius "RIM_RADIUS" O, "nominal rim radius, m (bottoming; default 0.5 R0)";
        rim_width "RIM_WIDTH" U, "rim width, m (not used)";
    }
    "VERTICAL" {
        vertical_stiffness "VERTICAL_STIFFNESS" R, "vertical stiffness Cz, N/m";
        vertical_damping "VERTICAL_DAMPING" D(0.0), "vertical damping, N s/m";
        breff "BREFF" O, "low-load stiffness of the effective rolling radius";
        dreff "DREFF" O, "peak value of the effective rolling radius";
        freff "FREFF" O, "high-load stiffness of the effective rolling radius";
        fnomin "FNOMIN" R, "nominal wheel load Fz0, N";
    }
    "LONG_SLIP_RANGE" {
        kpumin "KPUMIN" D(-1.5), "minimum valid wheel slip (fitted range, not clamped)";
        kpumax "KPUMAX" D(1.5), "maximum valid wheel slip (fitted range, not clamped)";
    }
    "SLIP_ANGLE_RANGE" {
        alpmin "ALPMIN" D(-std::f64::consts::FRAC_PI_2), "minimum valid slip angle, rad (fitted range, not clamped)";
        alpmax "ALPMAX" D(std::f64::consts::FRAC_PI_2), "maximum valid slip angle, rad (fitted range, not clamped)";
    }
    "INCLINATION_ANGLE_RANGE" {
        cammin "CAMMIN" D(-std::f64::consts::FRAC_PI_2), "minimum valid camber angle, rad (fitted range, not clamped)";
        cammax "CAMMAX" D(std::f64::consts::FRAC_PI_2), "maximum valid camber angle, rad (fitted range, not clamped)";
    }
    "VERTICAL_FORCE_RANGE" {
        fzmin "FZMIN" D(0.0), "minimum allowed wheel load, N (fitted range, not clamped)";
        fzmax "FZMAX" O, "maximum allowed wheel load, N (fitted range, not clamped; default 3 FNOMIN)";
    }
    "SCALING_COEFFICIENTS" {
        lfzo "LFZO" D(1.0), "scale factor of nominal (rated) load";
        lcx "LCX" D(1.0), "scale factor of Fx shape factor";
        lmux "LMUX" D(1.0), "scale factor of Fx peak friction coefficient";
        lex "LEX" D(1.0), "scale factor of Fx curvature factor";
        lkx "LKX" D(1.0), "scale factor of Fx slip stiffness";
        lhx "LHX" D(1.0), "scale factor of Fx horizontal shift";
        lvx "LVX" D(1.0), "scale factor of Fx vertical shift";
        lgax "LGAX" D(1.0), "scale factor of camber for Fx";
        lcy "LCY" D(1.0), "scale factor of Fy shape factor";
        lmuy "LMUY" D(1.0), "scale factor of Fy peak friction coefficient";
        ley "LEY" D(1.0), "scale factor of Fy curvature factor";
        lky "LKY" D(1.0), "scale factor of Fy cornering stiffness";
        lhy "LHY" D(1.0), "scale factor of Fy horizontal shift";
        lvy "LVY" D(1.0), "scale factor of Fy vertical shift";
        lgay "LGAY" D(1.0), "scale factor of camber for Fy";
        ltr "LTR" D(1.0), "scale factor of peak of pneumatic trail";
        lres "LRES" D(1.0), "scale factor for offset of residual torque";
        lgaz "LGAZ" D(1.0), "scale factor of camber for Mz";
        lxal "LXAL" D(1.0), "scale factor of alpha influence on Fx";
        lyka "LYKA" D(1.0), "scale factor of kappa influence on Fy";
        lvyka "LVYKA" D(1.0), "scale factor of kappa induced Fy";
        ls "LS" D(1.0), "scale factor of moment arm of Fx";
        lsgkp "LSGKP" D(1.0), "scale factor of relaxation length of Fx";
        lsgal "LSGAL" D(1.0), "scale factor of relaxation length of Fy";
        lgyr "LGYR" U, "scale factor of gyroscopic torque (not used)";
        lmx "LMX" D(1.0), "scale factor of overturning couple";
        lvmx "LVMX" D(1.0), "scale factor of Mx vertical shift";
        lmy "LMY" D(1.0), "scale factor of rolling resistance torque";
    }
    "LONGITUDINAL_COEFFICIENTS" {
        pcx1 "PCX1" R, "shape factor Cfx for longitudinal force";
        pdx1 "PDX1" R, "longitudinal friction Mux at Fznom";
        pdx2 "PDX2" D(0.0), "variation of friction Mux with load";
        pdx3 "PDX3" D(0.0), "variation of friction Mux with camber squared";
        pex1 "PEX1" D(0.0), "longitudinal curvature Efx at Fznom";
        pex2 "PEX2" D(0.0), "variation of curvature Efx with load";
        pex3 "PEX3" D(0.0), "variation of curvature Efx with load squared";
        pex4 "PEX4" D(0.0), "factor in curvature Efx while driving";
        pkx1 "PKX1" R, "longitudinal slip stiffness Kfx/Fz at Fznom";
        pkx2 "PKX2" D(0.0), "variation of slip stiffness Kfx/Fz with load";
        pkx3 "PKX3" D(0.0), "exponent in slip stiffness Kfx/Fz with load";
        phx1 "PHX1" D(0.0), "horizontal shift Shx at Fznom";
        phx2 "PHX2" D(0.0), "variation of shift Shx with load";
        pvx1 "PVX1" D(0.0), "vertical shift Svx/Fz at Fznom";
        pvx2 "PVX2" D(0.0), "variation of shift Svx/Fz with load";
        rbx1 "RBX1" D(0.0), "slope factor for combined slip Fx reduction";
        rbx2 "RBX2" D(0.0), "variation of slope Fx reduction with kappa";
        rcx1 "RCX1" D(0.0), "shape factor for combined slip Fx reduction";
        rex1 "REX1" D(0.0), "curvature factor of combined Fx";
        rex2 "REX2" D(0.0), "curvature factor of combined Fx with load";
        rhx1 "RHX1" D(0.0), "shift factor for combined slip Fx reduction";
        ptx1 "PTX1" D(0.0), "relaxation length SigKap0/Fz at Fznom";
        ptx2 "PTX2" D(0.0), "variation of SigKap0/Fz with load";
        ptx3 "PTX3" D(0.0), "variation of SigKap0/Fz with exponent of load";
    }
    "OVERTURNING_COEFFICIENTS" {
        qsx1 "QSX1" D(0.0), "lateral force induced overturning moment";
        qsx2 "QSX2" D(0.0), "camber induced overturning couple";
        qsx3 "QSX3" D(0.0), "Fy induced overturning couple";
    }
    "LATERAL_COEFFICIENTS" {
        pcy1 "PCY1" R, "shape factor Cfy for lateral forces";
        pdy1 "PDY1" R, "lateral friction Muy";
        pdy2 "PDY2" D(0.0), "variation of friction Muy with load";
        pdy3 "PDY3" D(0.0), "variation of friction Muy with squared camber";
        pey1 "PEY1" D(0.0), "lateral curvature Efy at Fznom";
        pey2 "PEY2" D(0.0), "variation of curvature Efy with load";
        pey3 "PEY3" D(0.0), "zero order camber dependency of curvature Efy";
        pey4 "PEY4" D(0.0), "variation of curvature Efy with camber";
        pky1 "PKY1" R, "maximum value of stiffness Kfy/Fznom";
        pky2 "PKY2" R, "load at which Kfy reaches maximum value";
        pky3 "PKY3" D(0.0), "variation of Kfy/Fznom with camber";
        phy1 "PHY1" D(0.0), "horizontal shift Shy at Fznom";
        phy2 "PHY2" D(0.0), "variation of shift Shy with load";
        phy3 "PHY3" D(0.0), "variation of shift Shy with camber";
        pvy1 "PVY1" D(0.0), "vertical shift in Svy/Fz at Fznom";
        pvy2 "PVY2" D(0.0), "variation of shift Svy/Fz with load";
        pvy3 "PVY3" D(0.0), "variation of shift Svy/Fz with camber";
        pvy4 "PVY4" D(0.0), "variation of shift Svy/Fz with camber and load";
        rby1 "RBY1" D(0.0), "slope factor for combined Fy reduction";
        rby2 "RBY2" D(0.0), "variation of slope Fy reduction with alpha";
        rby3 "RBY3" D(0.0), "shift term for alpha in slope Fy reduction";
        rcy1 "RCY1" D(0.0), "shape factor for combined Fy reduction";
        rey1 "REY1" D(0.0), "curvature factor of combined Fy";
        rey2 "REY2" D(0.0), "curvature factor of combined Fy with load";
        rhy1 "RHY1" D(0.0), "shift factor for combined Fy reduction";
        rhy2 "RHY2" D(0.0), "shift factor for combined Fy reduction with load";
        rvy1 "RVY1" D(0.0), "kappa induced side force Svyk/Muy*Fz at Fznom";
        rvy2 "RVY2" D(0.0), "variation of Svyk/Muy*Fz with load";
        rvy3 "RVY3" D(0.0), "variation of Svyk/Muy*Fz with camber";
        rvy4 "RVY4" D(0.0), "variation of Svyk/Muy*Fz with alpha";
        rvy5 "RVY5" D(0.0), "variation of Svyk/Muy*Fz with kappa";
        rvy6 "RVY6" D(0.0), "variation of Svyk/Muy*Fz with atan(kappa)";
        pty1 "PTY1" D(0.0), "peak value of relaxation length SigAlp0/R0";
        pty2 "PTY2" D(0.0), "value of Fz/Fznom where SigAlp0 is extreme";
    }
    "ROLLING_COEFFICIENTS" {
        qsy1 "QSY1" D(0.0), "rolling resistance torque coefficient";
        qsy2 "QSY2" D(0.0), "rolling resistance torque depending on Fx";
        qsy3 "QSY3" D(0.0), "rolling resistance torque depending on speed";
        qsy4 "QSY4" D(0.0), "rolling resistance torque depending on speed ^4";
    }
    "ALIGNING_COEFFICIENTS" {
        qbz1 "QBZ1" D(0.0), "trail slope factor for trail Bpt at Fznom";
        qbz2 "QBZ2" D(0.0), "variation of slope Bpt with load";
        qbz3 "QBZ3" D(0.0), "variation of slope Bpt with load squared";
        qbz4 "QBZ4" D(0.0), "variation of slope Bpt with camber";
        qbz5 "QBZ5" D(0.0), "variation of slope Bpt with absolute camber";
        qbz9 "QBZ9" D(0.0), "slope factor Br of residual torque Mzr";
        qbz10 "QBZ10" D(0.0), "slope factor Br of residual torque Mzr (times By Cy)";
        qcz1 "QCZ1" D(0.0), "shape factor Cpt for pneumatic trail";
        qdz1 "QDZ1" D(0.0), "peak trail Dpt = Dpt*(Fz/Fznom*R0)";
        qdz2 "QDZ2" D(0.0), "variation of peak Dpt with load";
        qdz3 "QDZ3" D(0.0), "variation of peak Dpt with camber";
        qdz4 "QDZ4" D(0.0), "variation of peak Dpt with camber squared";
        qdz6 "QDZ6" D(0.0), "peak residual torque Dmr = Dmr/(Fz*R0)";
        qdz7 "QDZ7" D(0.0), "variation of peak factor Dmr with load";
        qdz8 "QDZ8" D(0.0), "variation of peak factor Dmr with camber";
        qdz9 "QDZ9" D(0.0), "variation of peak factor Dmr with camber and load";
        qez1 "QEZ1" D(0.0), "trail curvature Ept at Fznom";
        qez2 "QEZ2" D(0.0), "variation of curvature Ept with load";
        qez3 "QEZ3" D(0.0), "variation of curvature Ept with load squared";
        qez4 "QEZ4" D(0.0), "variation of curvature Ept with sign of Alpha-t";
        qez5 "QEZ5" D(0.0), "variation of Ept with camber and sign Alpha-t";
        qhz1 "QHZ1" D(0.0), "trail horizontal shift Sht at Fznom";
        qhz2 "QHZ2" D(0.0), "variation of shift Sht with load";
        qhz3 "QHZ3" D(0.0), "variation of shift Sht with camber";
        qhz4 "QHZ4" D(0.0), "variation of shift Sht with camber and load";
        ssz1 "SSZ1" D(0.0), "nominal value of s/R0: effect of Fx on Mz";
        ssz2 "SSZ2" D(0.0), "variation of distance s/R0 with Fy/Fznom";
        ssz3 "SSZ3" D(0.0), "variation of distance s/R0 with camber";
        ssz4 "SSZ4" D(0.0), "variation of distance s/R0 with load and camber";
        qtz1 "QTZ1" U, "gyration torque constant (not used)";
        mbelt "MBELT" U, "belt mass of the wheel, kg (not used)";
    }
}

/// Text keys the model knows, by section; other text keys in these sections are errors.
const TEXT_KEYS: &[(&str, &str)] = &[
    ("MODEL", "PROPERTY_FILE_FORMAT"),
    ("MODEL", "TYRESIDE"),
    ("MODEL", "FE_METHOD"),
    ("MODEL", "CONTACT_MODEL"),
    ("UNITS", "LENGTH"),
    ("UNITS", "FORCE"),
    ("UNITS", "ANGLE"),
    ("UNITS", "MASS"),
    ("UNITS", "TIME"),
];

/// Table sections the model reads or accepts.
const TABLE_SECTIONS: &[&str] = &["SHAPE", "DEFLECTION_LOAD_CURVE", "BOTTOMING_CURVE"];

/// Accepted spellings of the SI units (the only units accepted; values are not converted).
const SI_UNITS: &[(&str, &[&str])] = &[
    ("LENGTH", &["meter", "metre", "m"]),
    ("FORCE", &["newton", "n"]),
    ("ANGLE", &["radian", "radians", "rad"]),
    ("MASS", &["kg", "kilogram"]),
    ("TIME", &["second", "sec", "s"]),
];

/// How combined slip is formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombinedMethod {
    /// USE_MODE 1–3: no coupling (Fx = Fx0, Fy = Fy0).
    Uncombined,
    /// MF 5.2 weighting functions Gxα, Gyκ (Pacejka 2nd ed. eqs. 4.E50–4.E67).
    Weighting,
    /// The friction-ellipse combination (`FE_METHOD = 'YES'`, or no combined coefficients).
    FrictionEllipse,
}

/// A table curve: (deflection m, force N).
pub type Curve = (Vec<f64>, Vec<f64>);

/// A parsed and checked PAC2002 property file.
#[derive(Debug, Clone, PartialEq)]
pub struct Pac2002File {
    /// The raw file (notes included).
    pub tir: TirFile,
    /// The coefficients (absent optional keys are NaN).
    pub c: Coefficients,
    /// Force/moment selection of USE_MODE mod 10: 1 Fx,My; 2 Fy,Mx,Mz; 3, 4 all.
    pub use_mode: u32,
    /// How combined slip is formed.
    pub combined: CombinedMethod,
    /// Vertical force over deflection (`[DEFLECTION_LOAD_CURVE]`), if given: (ρ m, Fz N).
    pub deflection_curve: Option<Curve>,
    /// Bottoming force over deflection (`[BOTTOMING_CURVE]`), if given.
    pub bottoming_curve: Option<Curve>,
}

/// The Levenshtein distance of two strings (for "did you mean").
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known key closest to `key` (any section), with its section.
pub fn closest_key(key: &str) -> Option<(&'static str, &'static str)> {
    KNOWN_KEYS
        .iter()
        .map(|k| (k.section, k.key))
        .chain(TEXT_KEYS.iter().copied())
        .min_by_key(|(_, k)| distance(key, k))
        .filter(|(_, k)| distance(key, k) <= 3)
}

fn is_model_section(s: &str) -> bool {
    s == "UNITS" || KNOWN_KEYS.iter().any(|k| k.section == s)
}

impl Pac2002File {
    /// Reads, parses and checks a `.tir` file.
    pub fn read(path: &std::path::Path) -> Result<Self, TirError> {
        Self::from_tir(TirFile::read(path)?)
    }

    /// Checks a parsed file: units, format, unknown and missing keys, tables.
    pub fn from_tir(mut tir: TirFile) -> Result<Self, TirError> {
        let path = tir.path.clone();
        let err = |line: usize, message: String| TirError {
            file: path.clone(),
            line,
            message,
        };
        let mut c = Coefficients::blank();
        let mut fe_method: Option<bool> = None;
        for e in &tir.entries {
            if !is_model_section(&e.section) {
                continue; // vendor/header sections ([MDI_HEADER], [GOODYEAR], …): noted below
            }
            match &e.value {
                TirValue::Number(x) => {
                    let known = KNOWN_KEYS
                        .iter()
                        .find(|k| k.section == e.section && k.key == e.key);
                    if known.is_none() {
                        let hint = match closest_key(&e.key) {
                            Some((s, k)) if s == e.section => format!("; did you mean {k}?"),
                            Some((s, k)) => format!("; did you mean {k} (in [{s}])?"),
                            None => String::new(),
                        };
                        let text_key = TEXT_KEYS
                            .iter()
                            .any(|(s, k)| *s == e.section && *k == e.key);
                        let msg = if text_key {
                            format!("{} must be a quoted string, e.g. {} = '...'", e.key, e.key)
                        } else {
                            format!(
                                "unknown key {} in [{}] for a PAC2002 tire{hint}",
                                e.key, e.section
                            )
                        };
                        return Err(err(e.line, msg));
                    }
                    if let Some(slot) = c.slot(&e.key) {
                        *slot = *x;
                    }
                }
                TirValue::Text(t) => {
                    if !TEXT_KEYS
                        .iter()
                        .any(|(s, k)| *s == e.section && *k == e.key)
                    {
                        if KNOWN_KEYS
                            .iter()
                            .any(|k| k.section == e.section && k.key == e.key)
                        {
                            return Err(err(
                                e.line,
                                format!("{} must be a number, not the string '{t}'", e.key),
                            ));
                        }
                        let hint = closest_key(&e.key)
                            .map(|(s, k)| format!("; did you mean {k} (in [{s}])?"))
                            .unwrap_or_default();
                        return Err(err(
                            e.line,
                            format!(
                                "unknown key {} in [{}] for a PAC2002 tire{hint}",
                                e.key, e.section
                            ),
                        ));
                    }
                    let upper = t.trim().to_ascii_uppercase();
                    match (e.section.as_str(), e.key.as_str()) {
                        ("UNITS", unit) => {
                            let ok = SI_UNITS.iter().any(|(k, names)| {
                                *k == unit && names.iter().any(|n| n.eq_ignore_ascii_case(&upper))
                            });
                            if !ok {
                                let want = SI_UNITS
                                    .iter()
                                    .find(|(k, _)| *k == unit)
                                    .map_or("", |(_, n)| n[0]);
                                return Err(err(
                                    e.line,
                                    format!(
                                        "{unit} = '{t}': only SI .tir files are accepted ({unit} = '{want}'); convert the file"
                                    ),
                                ));
                            }
                        }
                        ("MODEL", "PROPERTY_FILE_FORMAT")
                            if upper != "PAC2002" && upper != "MF_05" =>
                        {
                            return Err(err(
                                e.line,
                                format!(
                                    "PROPERTY_FILE_FORMAT = '{t}': this model reads 'PAC2002' (MF-Tyre 5.2) files only"
                                ),
                            ));
                        }
                        ("MODEL", "FE_METHOD") => {
                            fe_method = match upper.as_str() {
                                "YES" => Some(true),
                                "NO" => Some(false),
                                _ => {
                                    return Err(err(
                                        e.line,
                                        format!("FE_METHOD = '{t}': expected 'YES' or 'NO'"),
                                    ));
                                }
                            }
                        }
                        ("MODEL", "CONTACT_MODEL") => {
                            return Err(err(
                                e.line,
                                format!(
                                    "CONTACT_MODEL = '{t}': only the point contact is supported; remove the key"
                                ),
                            ));
                        }
                        _ => {} // TYRESIDE: mirroring is the vehicle's business (docs)
                    }
                }
            }
        }
        for t in &tir.tables {
            if is_model_section(&t.section) {
                return Err(err(
                    t.line + 1,
                    format!("[{}] holds `KEY = value` lines, not a table", t.section),
                ));
            }
        }
        // Missing required keys; defaults.
        for k in KNOWN_KEYS {
            let given = tir.entry(k.section, k.key).is_some();
            match k.need {
                Need::Required if !given => {
                    let (line, where_) = match tir.section_line(k.section) {
                        Some(l) => (l, format!("section [{}]", k.section)),
                        None => (0, format!("the file (no section [{}])", k.section)),
                    };
                    return Err(err(
                        line,
                        format!(
                            "required key {} ({}) is missing in {where_}; add `{} = ...`",
                            k.key, k.doc, k.key
                        ),
                    ));
                }
                Need::Default(x) if !given => {
                    if let Some(s) = c.slot(k.key) {
                        *s = x;
                    }
                }
                _ => {}
            }
        }
        let positive = |key: &str, x: f64| -> Result<(), TirError> {
            if x > 0.0 {
                Ok(())
            } else {
                let line = tir
                    .entries
                    .iter()
                    .find(|e| e.key == key)
                    .map_or(0, |e| e.line);
                Err(err(line, format!("{key} = {x} must be positive")))
            }
        };
        positive("UNLOADED_RADIUS", c.unloaded_radius)?;
        positive("WIDTH", c.width)?;
        positive("FNOMIN", c.fnomin)?;
        positive("VERTICAL_STIFFNESS", c.vertical_stiffness)?;
        positive("LFZO", c.lfzo)?;
        if c.pky2 == 0.0 {
            let line = tir
                .entry("LATERAL_COEFFICIENTS", "PKY2")
                .map_or(0, |e| e.line);
            return Err(err(
                line,
                "PKY2 must not be zero (it divides the load in Kyα)".into(),
            ));
        }
        let um = c.use_mode;
        let line_um = tir.entry("MODEL", "USE_MODE").map_or(0, |e| e.line);
        if um.fract() != 0.0 || um < 0.0 {
            return Err(err(
                line_um,
                format!(
                    "USE_MODE = {um}: mirrored (negative) or non-integer modes are not supported; use 1–4 or 11–14"
                ),
            ));
        }
        let use_mode = (um as u32) % 10;
        if !(1..=4).contains(&use_mode) || um > 14.0 {
            return Err(err(
                line_um,
                format!("USE_MODE = {um}: expected 1, 2, 3 or 4 (optionally +10)"),
            ));
        }
        let weighting_missing =
            (c.rbx1 == 0.0 && c.rcx1 == 0.0) || (c.rby1 == 0.0 && c.rcy1 == 0.0);
        let combined = if use_mode < 4 {
            CombinedMethod::Uncombined
        } else {
            match fe_method {
                Some(true) => CombinedMethod::FrictionEllipse,
                Some(false) => CombinedMethod::Weighting,
                None if weighting_missing => CombinedMethod::FrictionEllipse,
                None => CombinedMethod::Weighting,
            }
        };
        let curve = |section: &str| -> Result<Option<Curve>, TirError> {
            let Some(t) = tir.table(section) else {
                return Ok(None);
            };
            if t.rows.len() < 2 || t.rows[0].len() != 2 {
                return Err(err(
                    t.line,
                    format!("[{section}] needs at least two rows of (deflection m, force N)"),
                ));
            }
            let x: Vec<f64> = t.rows.iter().map(|r| r[0]).collect();
            let y: Vec<f64> = t.rows.iter().map(|r| r[1]).collect();
            if x.windows(2).any(|w| w[1] <= w[0]) || y.windows(2).any(|w| w[1] < w[0]) {
                return Err(err(
                    t.line,
                    format!("[{section}]: deflections must increase and forces must not decrease"),
                ));
            }
            Ok(Some((x, y)))
        };
        let deflection_curve = curve("DEFLECTION_LOAD_CURVE")?;
        let bottoming_curve = curve("BOTTOMING_CURVE")?;
        if let Some((x, y)) = &deflection_curve
            && (x[0] != 0.0 || y[0] != 0.0)
        {
            {
                let line = tir.table("DEFLECTION_LOAD_CURVE").map_or(0, |t| t.line);
                return Err(err(
                    line,
                    "[DEFLECTION_LOAD_CURVE] must start at (0, 0)".into(),
                ));
            }
        }
        for (s, line) in &tir.sections {
            if !is_model_section(s) && !TABLE_SECTIONS.contains(&s.as_str()) {
                tir.notes.push(format!(
                    "{}:{line}: section [{s}] is not used by the PAC2002 model",
                    path.display()
                ));
            }
        }
        Ok(Self {
            tir,
            c,
            use_mode,
            combined,
            deflection_curve,
            bottoming_curve,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const MINIMAL: &str = "[UNITS]\nLENGTH='meter'\n[DIMENSION]\nUNLOADED_RADIUS=0.3\nWIDTH=0.2\n\
        [VERTICAL]\nVERTICAL_STIFFNESS=2e5\nFNOMIN=4000\n[LONGITUDINAL_COEFFICIENTS]\nPCX1=1.6\nPDX1=1\nPKX1=20\n\
        [LATERAL_COEFFICIENTS]\nPCY1=1.3\nPDY1=0.9\nPKY1=-15\nPKY2=1.5\n";

    fn check(text: &str) -> Result<Pac2002File, TirError> {
        Pac2002File::from_tir(TirFile::parse(text, Path::new("x.tir"))?)
    }

    #[test]
    fn minimal_file_takes_defaults() {
        let f = check(MINIMAL).unwrap();
        assert_eq!(f.c.lmuy, 1.0);
        assert_eq!(f.c.pey1, 0.0);
        assert_eq!(f.use_mode, 4);
        assert_eq!(f.combined, CombinedMethod::FrictionEllipse);
        assert!(f.c.breff.is_nan());
    }

    #[test]
    fn unknown_key_suggests_the_closest() {
        let e = check(&MINIMAL.replace("PKY2=1.5", "PKY2=1.5\nPKY22=3")).unwrap_err();
        assert_eq!(e.line, 18);
        assert!(e.message.contains("unknown key PKY22"), "{e}");
        assert!(e.message.contains("did you mean PKY2"), "{e}");
        let e = check(&MINIMAL.replace("PDX1=1", "PDX1=1\nPCY1=2")).unwrap_err();
        assert!(e.message.contains("(in [LATERAL_COEFFICIENTS])"), "{e}");
    }

    #[test]
    fn missing_required_key_names_key_and_section() {
        let e = check(&MINIMAL.replace("PKX1=20\n", "")).unwrap_err();
        assert!(e.message.contains("required key PKX1"), "{e}");
        assert_eq!(e.line, 9, "points at the section header");
        let e = check(&MINIMAL.replace("[VERTICAL]\nVERTICAL_STIFFNESS=2e5\nFNOMIN=4000\n", ""))
            .unwrap_err();
        assert!(e.message.contains("no section [VERTICAL]"), "{e}");
    }

    #[test]
    fn non_si_units_are_refused() {
        let e = check(&MINIMAL.replace("'meter'", "'mm'")).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("only SI"), "{e}");
    }

    #[test]
    fn bad_mode_and_format() {
        let e = check(&format!("{MINIMAL}[MODEL]\nUSE_MODE=-4\n")).unwrap_err();
        assert!(e.message.contains("mirrored"), "{e}");
        let e = check(&format!("{MINIMAL}[MODEL]\nPROPERTY_FILE_FORMAT='MF_61'\n")).unwrap_err();
        assert!(e.message.contains("PAC2002"), "{e}");
        let e = check(&format!("{MINIMAL}[MODEL]\nUSE_MODE='x'\n")).unwrap_err();
        assert!(e.message.contains("must be a number"), "{e}");
    }
}
