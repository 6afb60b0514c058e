//! sprung-model
