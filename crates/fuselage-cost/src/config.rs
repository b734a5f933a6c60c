//! [`CostConfig`]: the two numbers every cost model is parameterised by.

use crate::error::{CostError, Result};
use serde::{Deserialize, Serialize};

/// The buffer size β and the element size b of a cost model.
///
/// Both are at least 1; the constructors refuse 0. The element size applies to activations and
/// weights alike (1 byte, int8, by default).
///
/// # Example
/// ```
/// use fuselage_cost::CostConfig;
/// let c = CostConfig::kib(256)?.with_element_bytes(2)?;
/// assert_eq!((c.buffer_bytes(), c.element_bytes()), (262_144, 2));
/// assert!(CostConfig::new(0).is_err());
/// # Ok::<(), fuselage_cost::CostError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CostConfig {
    buffer_bytes: u64,
    element_bytes: u64,
}

impl CostConfig {
    /// A buffer of `buffer_bytes` bytes, with 1-byte elements.
    ///
    /// # Errors
    /// [`CostError::ZeroBuffer`] for 0, [`CostError::BufferTooLarge`] past 1 TiB.
    pub fn new(buffer_bytes: u64) -> Result<Self> {
        if buffer_bytes == 0 {
            return Err(CostError::ZeroBuffer);
        }
        if buffer_bytes > 1 << 40 {
            return Err(CostError::BufferTooLarge(buffer_bytes));
        }
        Ok(CostConfig {
            buffer_bytes,
            element_bytes: 1,
        })
    }

    /// A buffer of `kib` KiB (1 KiB = 1,024 bytes), with 1-byte elements.
    ///
    /// # Errors
    /// [`CostError::ZeroBuffer`] for 0, [`CostError::BufferTooLarge`] past 1 TiB.
    pub fn kib(kib: u64) -> Result<Self> {
        CostConfig::new(kib.saturating_mul(1024))
    }

    /// The same buffer with `b`-byte elements.
    ///
    /// # Errors
    /// [`CostError::ZeroElementBytes`] for 0, [`CostError::ElementBytesTooLarge`] past 16
    /// (complex128, the widest ONNX type).
    pub fn with_element_bytes(self, b: u64) -> Result<Self> {
        if b == 0 {
            return Err(CostError::ZeroElementBytes);
        }
        if b > 16 {
            return Err(CostError::ElementBytesTooLarge(b));
        }
        Ok(CostConfig {
            element_bytes: b,
            ..self
        })
    }

    /// β, the on-chip buffer in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }

    /// b, the bytes of one element.
    pub fn element_bytes(&self) -> u64 {
        self.element_bytes
    }

    /// Whether a requirement of `bytes` fits: `bytes < β` (strict).
    pub fn fits(&self, bytes: u64) -> bool {
        bytes < self.buffer_bytes
    }
}
