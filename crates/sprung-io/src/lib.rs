//! sprung-io
