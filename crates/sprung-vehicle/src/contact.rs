//! Wheel–road contact: from a wheel marker and a road to the contact frame, deflection and
//! contact-frame kinematics of [`crate::tire::SlipKinematics`] (issue 13, item 1).
