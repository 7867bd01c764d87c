//! The switch buffer: how much a shared-memory switch may hold, and where.
//!
//! - [`alpha`]: the dynamic threshold parameter and its two encodings (SONiC `dynamic_th`,
//!   the PFC guide's percent table).
//! - [`formula`]: the three public headroom formulas (bytes in flight after XOFF).
//! - [`mmu`]: cell accounting of one switch: private, shared and headroom per ingress
//!   priority group, egress queue occupancy, the dynamic threshold and PFC decisions.

pub mod alpha;
pub mod formula;
pub mod mmu;

pub use alpha::{Alpha, AlphaError};
pub use mmu::{
    DropCause, HeadroomScheme, Mmu, MmuConfig, Placement, PrivateReservation, Region, Transition,
};
