//! sprung-mbs
