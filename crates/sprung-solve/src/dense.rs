//! Dense LU (placeholder, being written).
