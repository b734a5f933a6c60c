//! [`CostConfig`]: what every cost model is parameterised by — the on-chip buffer and the
//! element sizes.
//!
//! The buffer is one unified buffer of β bytes (the paper's setting), or two: a weight buffer
//! and an activation buffer ([`OnChipBuffer`]). A group fits when its on-chip weights and its
//! activation bands fit: `W + A < β` for a unified buffer, `W < β_w` and `A < β_a` for split
//! ones (strict, as the paper's `F_β < β`). Weights and activations have their own element
//! sizes (int8 weights with int16 activations is common); both default to 1 byte.

use crate::buffer::OnChipBuffer;
use crate::error::{CostError, Result};
use serde::{Deserialize, Serialize};

/// The buffer and the element sizes of a cost model.
///
/// Every size is at least 1; the constructors refuse 0.
///
/// # Example
/// ```
/// use fuselage_cost::CostConfig;
/// let c = CostConfig::kib(256)?.with_element_bytes(2)?;
/// assert_eq!(c.buffer_bytes(), 262_144);
/// assert_eq!((c.weight_element_bytes(), c.activation_element_bytes()), (2, 2));
/// assert!(CostConfig::new(0).is_err());
/// // Split buffers: weights and activations are checked apart.
/// let s = CostConfig::split(1000, 4000)?;
/// assert!(s.fits(999, 3999) && !s.fits(1000, 0) && !s.fits(0, 4000));
/// assert!(CostConfig::new(5000)?.fits(1000, 3999));
/// # Ok::<(), fuselage_cost::CostError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CostConfig {
    buffer: OnChipBuffer,
    weight_element_bytes: u64,
    activation_element_bytes: u64,
}

fn check_buffer(bytes: u64) -> Result<u64> {
    if bytes == 0 {
        return Err(CostError::ZeroBuffer);
    }
    if bytes > 1 << 40 {
        return Err(CostError::BufferTooLarge(bytes));
    }
    Ok(bytes)
}

fn check_element(b: u64) -> Result<u64> {
    if b == 0 {
        return Err(CostError::ZeroElementBytes);
    }
    if b > 16 {
        return Err(CostError::ElementBytesTooLarge(b));
    }
    Ok(b)
}

impl CostConfig {
    /// One unified buffer of `buffer_bytes` bytes, with 1-byte elements.
    ///
    /// # Errors
    /// [`CostError::ZeroBuffer`] for 0, [`CostError::BufferTooLarge`] past 1 TiB.
    pub fn new(buffer_bytes: u64) -> Result<Self> {
        Ok(CostConfig {
            buffer: OnChipBuffer::Unified {
                bytes: check_buffer(buffer_bytes)?,
            },
            weight_element_bytes: 1,
            activation_element_bytes: 1,
        })
    }

    /// A unified buffer of `kib` KiB (1 KiB = 1,024 bytes), with 1-byte elements.
    ///
    /// # Errors
    /// [`CostError::ZeroBuffer`] for 0, [`CostError::BufferTooLarge`] past 1 TiB.
    pub fn kib(kib: u64) -> Result<Self> {
        CostConfig::new(kib.saturating_mul(1024))
    }

    /// Split buffers: `weight_bytes` for weights, `activation_bytes` for activations, with
    /// 1-byte elements.
    ///
    /// # Errors
    /// As [`CostConfig::new`], for either buffer.
    pub fn split(weight_bytes: u64, activation_bytes: u64) -> Result<Self> {
        Ok(CostConfig {
            buffer: OnChipBuffer::Split {
                weight_bytes: check_buffer(weight_bytes)?,
                activation_bytes: check_buffer(activation_bytes)?,
            },
            weight_element_bytes: 1,
            activation_element_bytes: 1,
        })
    }

    /// The same config over `buffer`.
    ///
    /// # Errors
    /// As [`CostConfig::new`], for each buffer of `buffer`.
    pub fn with_buffer(self, buffer: OnChipBuffer) -> Result<Self> {
        let fresh = match buffer {
            OnChipBuffer::Unified { bytes } => CostConfig::new(bytes)?,
            OnChipBuffer::Split {
                weight_bytes,
                activation_bytes,
            } => CostConfig::split(weight_bytes, activation_bytes)?,
        };
        Ok(CostConfig {
            buffer: fresh.buffer,
            ..self
        })
    }

    /// The same buffer with `b`-byte elements, weights and activations alike.
    ///
    /// # Errors
    /// [`CostError::ZeroElementBytes`] for 0, [`CostError::ElementBytesTooLarge`] past 16
    /// (complex128, the widest ONNX type).
    pub fn with_element_bytes(self, b: u64) -> Result<Self> {
        let b = check_element(b)?;
        Ok(CostConfig {
            weight_element_bytes: b,
            activation_element_bytes: b,
            ..self
        })
    }

    /// The same buffer with `weights`-byte weight elements and `activations`-byte activation
    /// elements.
    ///
    /// # Errors
    /// As [`CostConfig::with_element_bytes`], for either size.
    pub fn with_element_sizes(self, weights: u64, activations: u64) -> Result<Self> {
        Ok(CostConfig {
            weight_element_bytes: check_element(weights)?,
            activation_element_bytes: check_element(activations)?,
            ..self
        })
    }

    /// The on-chip buffer.
    pub fn buffer(&self) -> OnChipBuffer {
        self.buffer
    }

    /// The on-chip buffer in bytes, in all: β for a unified buffer, `β_w + β_a` for split
    /// ones.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer.total_bytes()
    }

    /// Bytes of one weight element.
    pub fn weight_element_bytes(&self) -> u64 {
        self.weight_element_bytes
    }

    /// Bytes of one activation element.
    pub fn activation_element_bytes(&self) -> u64 {
        self.activation_element_bytes
    }

    /// The element size when weights and activations share one, `None` when they differ.
    pub fn uniform_element_bytes(&self) -> Option<u64> {
        (self.weight_element_bytes == self.activation_element_bytes)
            .then_some(self.weight_element_bytes)
    }

    /// Whether `weights` bytes of on-chip weights and `activations` bytes of activation bands
    /// fit: `weights + activations < β` (unified), or `weights < β_w` and
    /// `activations < β_a` (split). Strict, as `F_β < β`.
    pub fn fits(&self, weights: u64, activations: u64) -> bool {
        match self.buffer {
            OnChipBuffer::Unified { bytes } => weights.saturating_add(activations) < bytes,
            OnChipBuffer::Split {
                weight_bytes,
                activation_bytes,
            } => weights < weight_bytes && activations < activation_bytes,
        }
    }

    /// The room left for activations beside `weights` bytes of on-chip weights: `β − W`
    /// (unified) or `β_a` (split). A group's activations fit when they are under it (and, for
    /// split buffers, the weights fit theirs).
    pub fn activation_room(&self, weights: u64) -> u64 {
        match self.buffer {
            OnChipBuffer::Unified { bytes } => bytes.saturating_sub(weights),
            OnChipBuffer::Split {
                activation_bytes, ..
            } => activation_bytes,
        }
    }
}
