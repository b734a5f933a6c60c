//! [`OnChipBuffer`]: the on-chip buffer, unified or split. A leaf: the configuration
//! ([`CostConfig`](crate::CostConfig)) holds one, and a plan's problems
//! ([`PlanProblem`](crate::PlanProblem)) name the one they overflow.

use serde::{Deserialize, Serialize};

/// The on-chip buffer: one for everything, or one for weights and one for activations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnChipBuffer {
    /// One buffer of `bytes` for weights and activations together.
    Unified {
        /// β in bytes.
        bytes: u64,
    },
    /// A weight buffer and an activation buffer.
    Split {
        /// β_w, the weight buffer in bytes.
        weight_bytes: u64,
        /// β_a, the activation buffer in bytes.
        activation_bytes: u64,
    },
}

impl OnChipBuffer {
    /// The bytes of on-chip buffer in all (β, or `β_w + β_a`).
    pub fn total_bytes(&self) -> u64 {
        match *self {
            OnChipBuffer::Unified { bytes } => bytes,
            OnChipBuffer::Split {
                weight_bytes,
                activation_bytes,
            } => weight_bytes.saturating_add(activation_bytes),
        }
    }
}
