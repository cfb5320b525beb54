//! See tests/all.rs.
