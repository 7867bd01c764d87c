//! The swss-common Redis table protocol (being written).
