//! [`WholeTensor`]: the trivial cost model, in which a group holds every tensor it touches
//! whole. It needs no schedule and bounds LBDF from above (same `F_D`, larger `F_β`); it is
//! the baseline to compare row-streaming models with.

use crate::config::CostConfig;
use crate::error::Result;
use crate::model::{CostModel, GroupCost, OnChipBytes, Residency, TensorCost};
use crate::view::with_view;
use fuselage_ir::{Graph, NodeSet};

/// Every tensor of the group on chip, whole, and every weight.
///
/// ```text
/// F_β(φ) = W(φ) + Σ_t bytes(t)   over In(φ) and the tensors produced in φ
/// F_D(φ) = Σ_{In(φ)} bytes + Σ_{Out(φ)} bytes + W(φ)
/// ```
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, WholeTensor};
/// use fuselage_ir::{GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("g");
/// let x = b.input("input", TensorShape::nchw(2, 4, 4))?;
/// b.node("r", Op::Relu, &[x])?;
/// let g = b.finish()?;
/// let c = WholeTensor::new(CostConfig::new(100)?).evaluate(&g, &NodeSet::full(g.len()))?;
/// assert_eq!((c.buffer_bytes, c.dram_bytes, c.valid), (64, 64, true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WholeTensor {
    config: CostConfig,
}

impl WholeTensor {
    /// The model under `config`.
    pub fn new(config: CostConfig) -> Self {
        WholeTensor { config }
    }
}

impl CostModel for WholeTensor {
    fn name(&self) -> &str {
        "whole"
    }

    fn config(&self) -> &CostConfig {
        &self.config
    }

    fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost> {
        with_view(g, group, &self.config, |v| {
            let io = v.io_bytes();
            let w = v.weight_bytes;
            let activations = v.tensors.iter().map(|t| t.bytes()).sum::<u64>();
            Ok(GroupCost::new(
                &self.config,
                v.len(),
                OnChipBytes {
                    weights: w,
                    activations,
                },
                io.0 + io.1 + w,
                w,
                io,
                None,
            ))
        })
    }

    /// `F_β` itself: the weights and every tensor touched, whole, only grow with the group.
    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
        let c = self.evaluate(g, group)?;
        Ok(OnChipBytes {
            weights: c.weight_bytes,
            activations: c.activation_buffer_bytes,
        })
    }

    fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
        with_view(g, group, &self.config, |v| {
            Ok(Some(
                v.tensors
                    .iter()
                    .map(|t| TensorCost {
                        tensor: g.name_of(t.source).to_string(),
                        kind: t.kind,
                        resident_rows: t.h,
                        rows: t.h,
                        row_bytes: t.row,
                        bytes: t.bytes(),
                        whole: true,
                        reason: Residency::Model,
                    })
                    .collect(),
            ))
        })
    }
}
