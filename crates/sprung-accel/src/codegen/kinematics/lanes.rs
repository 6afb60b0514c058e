//! Isomorphic bodies in SIMD lanes: the statements the generator writes for two or four bodies
//! of the same structure (the left and right bodies of a corner, the followers of one corner
//! side by side: the same joint kind on the same parent, the same coordinates' count, the same
//! constants folded away) are one statement sequence over different inputs and constants. They
//! are fused into one sequence over `Lanes<N>` values (the prelude's [`PRELUDE`]): each lane
//! performs its body's scalar operation, IEEE operations lane by lane, so every lane's bits are
//! its scalar statement's; LLVM then emits one vector instruction for N scalar ones. (Document
//! 004's "same products across the four corners' bodies of one role",
//! ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5.)
//!
//! The fusion works on the statements' text, token by token ([`fuse`]): the lanes' texts must
//! agree token for token except for
//!
//! - the lanes' own locals (`b{lb}_name`, one name per lane with the same `name`): the fused
//!   local `b{lb0}b{lb1}…_name`, a `Lanes<N>` (or an array of them);
//! - atoms (buffer entries, r, v, other bodies' locals) and literals: equal in every lane, a
//!   scalar shared by the lanes (mixed with lanes by the prelude's operators); else the lanes'
//!   vector `Lanes([a0, a1, …])`.
//!
//! Anything else (a different structure: another operation, a zero or one folded in one lane
//! only, a call the prelude has no lane form of) refuses the fusion and the bodies are written
//! one by one as before. A store `s[i] = x;` of the lanes becomes `[s[i0], s[i1], …] = x.0;`.

use std::collections::HashMap;
use std::fmt::Write;

/// The lane type and its lane-wise operators, written once per source (tree 0's kinematics).
pub const PRELUDE: &str = r#"
// ---- Kinematics: N isomorphic bodies in SIMD lanes ----

/// One value of N isomorphic bodies (lane k: body k of the group). Every operator works lane
/// by lane with the scalar IEEE operation (no fused multiply-add), so each lane holds its
/// scalar statement's bits; a scalar operand is the same in every lane.
#[derive(Clone, Copy, Debug)]
struct Lanes<const N: usize>([f64; N]);

impl<const N: usize> Lanes<N> {
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Lanes([x; N])
    }
}

macro_rules! lanes_op {
    ($n:literal [$($k:literal)*] $simd:ident, $tr:ident, $f:ident, $op:tt, $mm:ident) => {
        impl std::ops::$tr for Lanes<$n> {
            type Output = Lanes<$n>;
            #[inline(always)]
            fn $f(self, o: Lanes<$n>) -> Lanes<$n> {
                lanes_simd!($simd, $mm, self, o, Lanes([$(self.0[$k] $op o.0[$k]),*]))
            }
        }
        impl std::ops::$tr<f64> for Lanes<$n> {
            type Output = Lanes<$n>;
            #[inline(always)]
            fn $f(self, o: f64) -> Lanes<$n> {
                self $op Lanes::<$n>::splat(o)
            }
        }
        impl std::ops::$tr<Lanes<$n>> for f64 {
            type Output = Lanes<$n>;
            #[inline(always)]
            fn $f(self, o: Lanes<$n>) -> Lanes<$n> {
                Lanes::<$n>::splat(self) $op o
            }
        }
    };
}

/// Two lanes on x86-64: one SSE2 instruction (the target's baseline); else lane by lane.
macro_rules! lanes_simd {
    (sse2, $mm:ident, $a:expr, $b:expr, $fallback:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let (a, b) = ($a.0, $b.0);
            // SAFETY: SSE2 is part of every x86-64 CPU (the target's baseline); the intrinsics
            // take and return values only.
            unsafe {
                let r = $mm(_mm_set_pd(a[1], a[0]), _mm_set_pd(b[1], b[0]));
                Lanes([_mm_cvtsd_f64(r), _mm_cvtsd_f64(_mm_unpackhi_pd(r, r))])
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $fallback
        }
    }};
    (avx, $mm:ident, $a:expr, $b:expr, $fallback:expr) => {{
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        {
            use std::arch::x86_64::*;
            let (a, b) = ($a.0, $b.0);
            // SAFETY: the plugin is compiled with AVX (cfg above) for this machine's CPU; the
            // intrinsics take and return values only.
            unsafe {
                let r = lanes_simd!(@avx $mm)(
                    _mm256_set_pd(a[3], a[2], a[1], a[0]),
                    _mm256_set_pd(b[3], b[2], b[1], b[0]),
                );
                let (lo, hi) = (_mm256_castpd256_pd128(r), _mm256_extractf128_pd::<1>(r));
                Lanes([
                    _mm_cvtsd_f64(lo),
                    _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo)),
                    _mm_cvtsd_f64(hi),
                    _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi)),
                ])
            }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        {
            // Two SSE2 pairs.
            let (a, b) = ($a.0, $b.0);
            let lo = lanes_simd!(sse2, $mm, Lanes([a[0], a[1]]), Lanes([b[0], b[1]]), $fallback);
            let hi = lanes_simd!(sse2, $mm, Lanes([a[2], a[3]]), Lanes([b[2], b[3]]), $fallback);
            Lanes([lo.0[0], lo.0[1], hi.0[0], hi.0[1]])
        }
    }};
    (@avx _mm_add_pd) => { _mm256_add_pd };
    (@avx _mm_sub_pd) => { _mm256_sub_pd };
    (@avx _mm_mul_pd) => { _mm256_mul_pd };
    (@avx _mm_div_pd) => { _mm256_div_pd };
}

macro_rules! lanes_n {
    ($n:literal [$($k:literal)*] $simd:ident) => {
        lanes_op!($n [$($k)*] $simd, Add, add, +, _mm_add_pd);
        lanes_op!($n [$($k)*] $simd, Sub, sub, -, _mm_sub_pd);
        lanes_op!($n [$($k)*] $simd, Mul, mul, *, _mm_mul_pd);
        lanes_op!($n [$($k)*] $simd, Div, div, /, _mm_div_pd);

        impl std::ops::Neg for Lanes<$n> {
            type Output = Lanes<$n>;
            #[inline(always)]
            fn neg(self) -> Lanes<$n> {
                Lanes([$(-self.0[$k]),*])
            }
        }

        impl Lanes<$n> {
            /// `rot_coeffs` lane by lane: the series on the lanes where every lane is below
            /// θ = 1 (each lane's branch), else each lane's scalar `rot_coeffs`.
            #[inline(always)]
            fn rot_coeffs(self, rates: bool) -> (Self, Self, Self, Self, Self) {
                if $(self.0[$k] < 1.0)&&* {
                    return rot_series!(self, rates, Lanes::splat(0.0));
                }
                let c = [$(rot_coeffs(self.0[$k], rates)),*];
                (
                    Lanes([$(c[$k].0),*]),
                    Lanes([$(c[$k].1),*]),
                    Lanes([$(c[$k].2),*]),
                    Lanes([$(c[$k].3),*]),
                    Lanes([$(c[$k].4),*]),
                )
            }
        }
    };
}
lanes_n!(2 [0 1] sse2);
lanes_n!(4 [0 1 2 3] avx);
"#;

/// A token of a generated statement.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A name with its indices (`s[12]`, `b2_R[0][1]`, `rot_coeffs`, `let`, `true`).
    Name(String),
    /// A number (`1.5f64`, `f64::from_bits(0x…)`).
    Num(String),
    /// One character of punctuation.
    P(char),
}

/// The tokens of `s`, `None` if it has something this fusion does not know.
fn tokens(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if s[i..].starts_with("f64::from_bits(") {
            let end = s[i..].find(')')? + i + 1;
            out.push(Tok::Num(s[i..end].to_string()));
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // Constant indices belong to the name.
            while i < b.len() && b[i] == b'[' {
                let close = s[i..].find(']')? + i;
                if !s[i + 1..close].bytes().all(|d| d.is_ascii_digit()) || close == i + 1 {
                    break;
                }
                i = close + 1;
            }
            out.push(Tok::Name(s[st..i].to_string()));
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || ((b[i] == b'-' || b[i] == b'+') && matches!(b[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            out.push(Tok::Num(s[st..i].to_string()));
        } else if b"()[],+-*/=;".contains(&c) {
            out.push(Tok::P(c as char));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// The lanes of one group: their local prefixes (`b{lb}_`) and the fused locals' prefix.
pub struct Group {
    prefixes: Vec<String>,
    fused: String,
}

impl Group {
    /// The group of the tree bodies `lbs` (local indices).
    pub fn new(lbs: &[usize]) -> Self {
        Group {
            prefixes: lbs.iter().map(|lb| format!("b{lb}_")).collect(),
            fused: lbs.iter().map(|lb| format!("b{lb}")).collect::<String>() + "_",
        }
    }

    fn n(&self) -> usize {
        self.prefixes.len()
    }

    /// The lane-local name's suffix of a name of lane k (its base name, without indices).
    fn local<'a>(&self, k: usize, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.prefixes[k].as_str())
    }
}

/// One fused token: its text and whether it varies by lane.
struct Fused {
    text: String,
    lane: bool,
}

/// The fused tokens of the lanes' token lists, `None` where they do not fuse. `names`: the
/// lanes' locals met so far by lane 0's name (lane k's local of a name is one name throughout:
/// the names may differ, e.g. by the coordinate they are a column of).
fn fuse_tokens(
    g: &Group,
    lanes: &[Vec<Tok>],
    names: &mut HashMap<String, Vec<String>>,
) -> Option<Vec<Fused>> {
    let len = lanes[0].len();
    if lanes.iter().any(|t| t.len() != len) {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let t0 = &lanes[0][i];
        // The lanes' own locals: the base names (a renaming, the same in the whole group) and
        // the same indices.
        if let Tok::Name(n0) = t0
            && g.local(0, n0).is_some()
        {
            let (base0, idx) = n0.split_at(n0.find('[').unwrap_or(n0.len()));
            let mut bases = Vec::with_capacity(g.n());
            for (k, l) in lanes.iter().enumerate() {
                match &l[i] {
                    Tok::Name(nk) if g.local(k, nk).is_some() => {
                        let (base, ik) = nk.split_at(nk.find('[').unwrap_or(nk.len()));
                        if ik != idx {
                            return None;
                        }
                        bases.push(base.to_string());
                    }
                    _ => return None,
                }
            }
            if *names
                .entry(base0.to_string())
                .or_insert_with(|| bases.clone())
                != bases
            {
                return None;
            }
            let suffix = g.local(0, base0).expect("lane 0's local");
            out.push(Fused {
                text: format!("{}{suffix}{idx}", g.fused),
                lane: true,
            });
            continue;
        }
        let same = lanes.iter().all(|l| &l[i] == t0);
        match t0 {
            Tok::P(c) if same => out.push(Fused {
                text: c.to_string(),
                lane: false,
            }),
            Tok::Name(n) | Tok::Num(n) if same => out.push(Fused {
                text: n.clone(),
                lane: false,
            }),
            Tok::Name(_) | Tok::Num(_) => {
                // Atoms or literals that differ by lane (none of them a lane's local).
                let mut texts = Vec::with_capacity(g.n());
                for (k, l) in lanes.iter().enumerate() {
                    match &l[i] {
                        Tok::Name(n) if g.local(k, n).is_none() && is_atom(n) => {
                            texts.push(n.clone())
                        }
                        Tok::Num(n) => texts.push(n.clone()),
                        _ => return None,
                    }
                }
                out.push(Fused {
                    text: format!("Lanes([{}])", texts.join(", ")),
                    lane: true,
                });
            }
            Tok::P(_) => return None,
        }
    }
    Some(out)
}

/// Whether a name is a value (an indexed element or a local), not a keyword or a function.
fn is_atom(n: &str) -> bool {
    n.contains('[') || (n.starts_with('b') && n.contains('_'))
}

/// The text of fused tokens; with `lanes_value`, every top-level expression that does not vary
/// by lane (an array element, the value itself) splatted into lanes, so the value is a
/// `Lanes<N>` or an array of them.
fn text_of(toks: &[Fused], lanes_value: bool) -> String {
    let mut out = String::new();
    let mut seg: Vec<&Fused> = Vec::new();
    let mut depth = 0i32;
    let flush = |seg: &mut Vec<&Fused>, out: &mut String| {
        if seg.is_empty() {
            return;
        }
        let text = join(seg);
        if lanes_value && !seg.iter().any(|t| t.lane) {
            let _ = write!(out, "Lanes::splat({text})");
        } else {
            out.push_str(&text);
        }
        seg.clear();
    };
    for t in toks {
        match t.text.as_str() {
            "[" | "]" | "," if depth == 0 => {
                flush(&mut seg, &mut out);
                out.push_str(&t.text);
                if t.text == "," {
                    out.push(' ');
                }
            }
            _ => {
                match t.text.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                seg.push(t);
            }
        }
    }
    flush(&mut seg, &mut out);
    out
}

/// Tokens' text with the spacing of the generated code.
fn join(toks: &[&Fused]) -> String {
    let mut s = String::new();
    let mut prev: Option<&str> = None;
    for t in toks {
        let x = t.text.as_str();
        let space = match (prev, x) {
            (None, _) => false,
            (Some("(" | "["), _) => false,
            (_, ")" | "]" | ",") => false,
            // A unary minus (after an operator, a parenthesis or at the start) binds.
            (Some("-"), _) if is_unary(&s) => false,
            (Some("let"), _) => true,
            (Some(p), "(") => !(p.ends_with(|c: char| c.is_alphanumeric() || c == '_')),
            _ => true,
        };
        if space {
            s.push(' ');
        }
        s.push_str(x);
        prev = Some(x);
    }
    s
}

/// Whether the `-` that ends `s` is unary.
fn is_unary(s: &str) -> bool {
    let t = s[..s.len() - 1].trim_end();
    t.is_empty() || t.ends_with(['(', '[', ',', '+', '-', '*', '/', '='])
}

/// The fused statements of the lanes' statement texts (one statement or comment a line,
/// generated by [`super::Gen`] for each body of the group), `None` if they do not fuse.
pub fn fuse(g: &Group, texts: &[String], comment: &str) -> Option<String> {
    let lines: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| t.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
        .collect();
    let n = lines[0].len();
    if lines.iter().any(|l| l.len() != n) {
        return None;
    }
    let mut out = String::new();
    let mut names = HashMap::new();
    let _ = writeln!(out, "    // {comment}");
    for i in 0..n {
        let ls: Vec<&str> = lines.iter().map(|l| l[i]).collect();
        if ls.iter().all(|l| l.starts_with("//")) {
            for l in &ls {
                let _ = writeln!(out, "    {l}");
            }
            continue;
        }
        let toks: Vec<Vec<Tok>> = ls.iter().map(|l| tokens(l)).collect::<Option<_>>()?;
        let fused = fuse_tokens(g, &toks, &mut names)?;
        let eq = fused.iter().position(|t| t.text == "=")?;
        if fused.last().map(|t| t.text.as_str()) != Some(";") {
            return None;
        }
        let (lhs, rhs) = (&fused[..eq], &fused[eq + 1..fused.len() - 1]);
        if lhs.first().map(|t| t.text.as_str()) == Some("let") {
            // Every name it binds is the lanes' own (a local of another body would be a
            // statement of one lane for all).
            if !lhs[1..]
                .iter()
                .all(|t| t.lane || matches!(t.text.as_str(), "(" | ")" | ","))
            {
                return None;
            }
            // A local of the lanes (a value the lanes share splatted: `Lanes::splat(v[6] * v[6])`).
            let mut rhs_text = text_of(rhs, true);
            if let Some(rest) = rhs_text.strip_prefix("rot_coeffs(") {
                // `rot_coeffs(θ², rates)`: the lanes' method.
                let (arg, rates) = rest.strip_suffix(')')?.rsplit_once(", ")?;
                rhs_text = format!("({arg}).rot_coeffs({rates})");
            } else if rhs_text.contains("rot_coeffs(") {
                return None;
            }
            let refs: Vec<&Fused> = lhs.iter().collect();
            let _ = writeln!(out, "    {} = {rhs_text};", join(&refs));
        } else {
            // A store into the buffer: each lane its own entry.
            if lhs.len() != 1 {
                return None;
            }
            let at: Vec<&str> = toks
                .iter()
                .map(|t| match &t[0] {
                    Tok::Name(x) if x.starts_with("s[") => Some(x.as_str()),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            if rhs.iter().any(|t| t.lane) {
                let value = text_of(rhs, false);
                let value = if rhs.len() == 1 {
                    value
                } else {
                    format!("({value})")
                };
                let _ = writeln!(out, "    [{}] = {value}.0;", at.join(", "));
            } else {
                for l in &ls {
                    let _ = writeln!(out, "    {l}");
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_isomorphic_bodies_fuse_into_lanes() {
        let g = Group::new(&[2, 5]);
        let a = "    // Body 'a'.\n    let b2_d = [b0_R[0][0] * s[10] + 1.5f64, -b2_q * s[11]];\n    s[3] = b2_d[1];\n"
            .to_string();
        let b = "    // Body 'b'.\n    let b5_d = [b0_R[0][0] * s[20] + 2.5f64, -b5_q * s[21]];\n    s[7] = b5_d[1];\n"
            .to_string();
        let f = fuse(&g, &[a, b], "lanes").expect("fuses");
        assert!(
            f.contains(
                "let b2b5_d = [b0_R[0][0] * Lanes([s[10], s[20]]) + Lanes([1.5f64, 2.5f64]), -b2b5_q * Lanes([s[11], s[21]])];"
            ),
            "{f}"
        );
        assert!(f.contains("[s[3], s[7]] = b2b5_d[1].0;"), "{f}");
        // Another structure (a product folded in one lane) does not fuse.
        let c = "    // Body 'b'.\n    let b5_d = [b0_R[0][0] * s[20] + 2.5f64, s[21]];\n    s[7] = b5_d[1];\n"
            .to_string();
        let a = "    // Body 'a'.\n    let b2_d = [b0_R[0][0] * s[10] + 1.5f64, -b2_q * s[11]];\n    s[3] = b2_d[1];\n"
            .to_string();
        assert!(fuse(&g, &[a, c], "lanes").is_none());
        // A statement binding a name that is not the lanes' own (a running sum of all bodies)
        // does not fuse.
        let a = "    let z3_3 = z3_3 + b2_j[0] * s[1];\n".to_string();
        let b = "    let z3_3 = z3_3 + b5_j[0] * s[2];\n".to_string();
        assert!(fuse(&g, &[a, b], "lanes").is_none());
    }

    #[test]
    fn numbers_with_exponents_are_one_token() {
        let t = tokens("x * 1e-5f64 - 2.5E+3f64").expect("tokens");
        assert_eq!(t[2], Tok::Num("1e-5f64".into()));
        assert_eq!(t[4], Tok::Num("2.5E+3f64".into()));
    }
}
