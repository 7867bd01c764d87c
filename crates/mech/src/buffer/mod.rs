//! Switch buffer (MMU) accounting.
