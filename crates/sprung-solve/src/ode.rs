//! First-order ODE suite (placeholder, being written).
