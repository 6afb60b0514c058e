//! Block-sparse LU (placeholder, being written).
