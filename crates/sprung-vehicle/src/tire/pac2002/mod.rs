//! Pacejka 2002 (Magic Formula 5.2) from `.tir` files: see issue 13 and
//! `../shared/data/vehicle-reference.md`, "Pacejka 2002".
