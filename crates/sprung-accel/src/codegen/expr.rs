//! Scalars of the generated code with the folding both emitters of `tree{t}_kinematics` share
//! ([`super::kinematics`], [`super::mass_matrix`]): a literal known at generation time, or an
//! expression over the generated locals, r, v and the flat buffer with its precedence. Sums and
//! products with an exact 0 or ±1 fold away (the generic code forms them and gets the same value,
//! up to the sign of a zero); two literals fold by the same IEEE operation; everything else is
//! written in the order it is built (left to right), never reassociated.

use super::lit;

/// A scalar of the generated code: a literal (folded at generation time) or an expression over
/// the generated locals, r, v and the buffer, with its precedence (0 sum, 1 product, 2 atom).
#[derive(Debug, Clone, PartialEq)]
pub enum E {
    Lit(f64),
    X(String, u8),
}

impl E {
    /// A local, an array element or a call: needs no parentheses.
    pub fn atom(s: impl Into<String>) -> E {
        E::X(s.into(), 2)
    }

    /// The literal +0.
    pub fn zero() -> E {
        E::Lit(0.0)
    }

    /// Whether it is the literal `x` (compared by value: ±0 alike).
    pub fn is_lit(&self, x: f64) -> bool {
        matches!(self, E::Lit(y) if *y == x)
    }

    /// Its precedence: 0 sum, 1 product (and a negative literal), 2 atom.
    pub fn prec(&self) -> u8 {
        match self {
            E::Lit(x) if *x < 0.0 || (*x == 0.0 && x.is_sign_negative()) => 1,
            _ => match self {
                E::X(_, p) => *p,
                E::Lit(_) => 2,
            },
        }
    }

    /// The text as a statement's value.
    pub fn text(&self) -> String {
        match self {
            E::Lit(x) => lit(*x),
            E::X(s, _) => s.clone(),
        }
    }

    /// The text as an operand that needs precedence at least `p`.
    pub fn operand(&self, p: u8) -> String {
        if self.prec() >= p {
            self.text()
        } else {
            format!("({})", self.text())
        }
    }
}

/// a + b.
pub fn add(a: &E, b: &E) -> E {
    match (a, b) {
        (E::Lit(x), E::Lit(y)) => E::Lit(x + y),
        _ if a.is_lit(0.0) => b.clone(),
        _ if b.is_lit(0.0) => a.clone(),
        _ => E::X(format!("{} + {}", a.operand(0), b.operand(1)), 0),
    }
}

/// a − b.
pub fn sub(a: &E, b: &E) -> E {
    match (a, b) {
        (E::Lit(x), E::Lit(y)) => E::Lit(x - y),
        _ if b.is_lit(0.0) => a.clone(),
        _ if a.is_lit(0.0) => neg(b),
        _ => E::X(format!("{} - {}", a.operand(0), b.operand(1)), 0),
    }
}

/// −a.
pub fn neg(a: &E) -> E {
    match a {
        E::Lit(x) => E::Lit(-x),
        E::X(s, 2) => E::X(format!("-{s}"), 2),
        E::X(s, _) => E::X(format!("-({s})"), 2),
    }
}

/// a · b.
pub fn mul(a: &E, b: &E) -> E {
    match (a, b) {
        (E::Lit(x), E::Lit(y)) => E::Lit(x * y),
        _ if a.is_lit(0.0) || b.is_lit(0.0) => E::zero(),
        _ if a.is_lit(1.0) => b.clone(),
        _ if b.is_lit(1.0) => a.clone(),
        _ if a.is_lit(-1.0) => neg(b),
        _ if b.is_lit(-1.0) => neg(a),
        _ => E::X(format!("{} * {}", a.operand(1), b.operand(2)), 1),
    }
}

/// a / b (two literals folded; a divisor 1 left out).
pub fn div(a: &E, b: &E) -> E {
    match (a, b) {
        (E::Lit(x), E::Lit(y)) => E::Lit(x / y),
        _ if b.is_lit(1.0) => a.clone(),
        _ => E::X(format!("{} / {}", a.operand(1), b.operand(2)), 1),
    }
}
