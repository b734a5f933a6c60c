//! Tensor shapes, and the C/H/W reading of them that the cost models use.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The static shape of a tensor, batch included (`[1, C, H, W]`, `[1, F]`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct TensorShape(pub Vec<u64>);

impl TensorShape {
    /// A shape from its dimensions.
    pub fn new(dims: impl Into<Vec<u64>>) -> Self {
        TensorShape(dims.into())
    }

    /// `[1, c, h, w]`.
    pub fn nchw(c: u64, h: u64, w: u64) -> Self {
        TensorShape(vec![1, c, h, w])
    }

    /// The dimensions.
    pub fn dims(&self) -> &[u64] {
        &self.0
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for a scalar).
    pub fn elements(&self) -> u64 {
        self.0.iter().product()
    }

    /// Number of elements, or `None` when the product overflows `u64`.
    pub fn checked_elements(&self) -> Option<u64> {
        self.0.iter().try_fold(1u64, |p, &d| p.checked_mul(d))
    }

    /// Channels, as the cost contract reads them: `C` of NCHW, `D` of `[1, L, D]`, `F` of
    /// `[1, F]`; for other ranks, the product of everything but batch, height and width.
    pub fn c(&self) -> u64 {
        match self.0.len() {
            0 => 1,
            1 => self.0[0],
            2 => self.0[1],
            3 => self.0[2],
            _ => self.0[1..self.0.len() - 2].iter().product(),
        }
    }

    /// Rows (height): `H` of NCHW, `L` of `[1, L, D]`, 1 for rank 2 or less.
    pub fn h(&self) -> u64 {
        match self.0.len() {
            0..=2 => 1,
            3 => self.0[1],
            n => self.0[n - 2],
        }
    }

    /// Width: `W` of NCHW, 1 for rank 3 or less.
    pub fn w(&self) -> u64 {
        match self.0.len() {
            0..=3 => 1,
            n => self.0[n - 1],
        }
    }
}

impl fmt::Display for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.0.iter().map(u64::to_string).collect();
        write!(f, "[{}]", dims.join(", "))
    }
}

impl From<Vec<u64>> for TensorShape {
    fn from(v: Vec<u64>) -> Self {
        TensorShape(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chw_follow_the_contract() {
        let s = TensorShape::nchw(64, 56, 28);
        assert_eq!((s.c(), s.h(), s.w()), (64, 56, 28));
        let s = TensorShape::new(vec![1, 197, 768]);
        assert_eq!((s.c(), s.h(), s.w()), (768, 197, 1));
        let s = TensorShape::new(vec![1, 1000]);
        assert_eq!((s.c(), s.h(), s.w()), (1000, 1, 1));
        assert_eq!(TensorShape::nchw(3, 4, 5).elements(), 60);
        assert_eq!(TensorShape::nchw(3, 4, 5).to_string(), "[1, 3, 4, 5]");
    }
}
