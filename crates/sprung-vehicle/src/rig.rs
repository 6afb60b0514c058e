//! The tire test rig: steady sweeps of slip, slip angle, load and camber and a transient
//! slip-angle step on any tire law (issue 13, item 6; `sprung tire`).
