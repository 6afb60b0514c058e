//! Mechanical systems (placeholder, being written).
