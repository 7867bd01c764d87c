//! ECN marking.
