//! TMeasy (Rill): see issue 13 and `../shared/data/vehicle-reference.md`, "TMeasy tire".
