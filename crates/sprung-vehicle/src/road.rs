//! Roads: height, normal and friction of the road surface at a point (issue 13, item 2).
