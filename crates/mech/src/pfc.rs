//! Priority flow control.
