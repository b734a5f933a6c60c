//! LBDF: line-buffer depth-first fusion (Goetschalckx & Verhelst 2019; Shi et al. 2021).
//!
//! All weights of a group stay on chip; the group streams row by row, so each tensor keeps
//! only a band of rows, and a skip connection makes a tensor keep rows until the longer branch
//! has caught up:
//!
//! ```text
//! F_β(φ) = W(φ) + Σ_t resident_t · row(t)      t ∈ In(φ) ∪ tensors produced in φ
//! F_D(φ) = Σ_{In(φ)} bytes + Σ_{Out(φ)} bytes + W(φ)
//! ```
//!
//! The resident bands come out of one backward pass in reverse topological order (see the
//! crate docs and `docs/cost-models.md` for the rules and a worked example).
//!
//! **Phases.** The contract's rule streams a tensor that is held whole (a whole port, or two
//! ports at different rates) "as if it were a group output". A whole read is a barrier: what
//! feeds it is computed completely before its reader's first row. [`Lbdf::new`] therefore
//! numbers phases — 0 for tensors that stream with the group's outputs, one more than its
//! readers' for a tensor held whole — and also holds whole a tensor read from two different
//! phases (the skip around a Squeeze-and-Excite block). This refines the contract where the
//! literal rule is not realisable (the buffer simulator exceeds it there); it changes no
//! canonical number. [`Lbdf::literal`] is the contract's rule without phases.

use crate::config::CostConfig;
use crate::error::Result;
use crate::model::{CostModel, GroupCost, OnChipBytes, TensorCost};
use crate::view::{View, with_view};
use fuselage_ir::{Graph, NodeSet};

/// The LBDF cost model.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Lbdf};
/// use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};
/// // conv 3x3 -> relu -> conv 3x3 -> add(skip from the first conv) -> relu
/// let mut b = GraphBuilder::new("block");
/// let x = b.input("input", TensorShape::nchw(8, 16, 16))?;
/// let c1 = b.node("c1", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])?;
/// let r1 = b.node("r1", Op::Relu, &[c1])?;
/// let c2 = b.node("c2", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[r1])?;
/// let a = b.node("add", Op::Add, &[c2, c1])?;
/// b.node("r2", Op::Relu, &[a])?;
/// let g = b.finish()?;
/// let lbdf = Lbdf::new(CostConfig::new(4096)?);
/// let all = NodeSet::full(g.len());
/// let rows: Vec<(String, u64)> = lbdf
///     .breakdown(&g, &all)?
///     .unwrap()
///     .into_iter()
///     .map(|t| (t.tensor, t.resident_rows))
///     .collect();
/// // c1's output waits for the longer branch: r1 runs one row ahead of the add.
/// assert_eq!(rows[0], ("c1".to_string(), 2));
/// assert_eq!(rows[1], ("r1".to_string(), 3));
/// assert_eq!(rows[5], ("input".to_string(), 3));
/// let cost = lbdf.evaluate(&g, &all)?;
/// assert_eq!(cost.weight_bytes, 2 * (8 * 8 * 9 + 8));
/// // 11 rows of 128 bytes in all.
/// assert_eq!(cost.buffer_bytes, 1168 + 11 * 128);
/// assert!(cost.valid);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lbdf {
    config: CostConfig,
    phased: bool,
}

impl Lbdf {
    /// LBDF with phases (the default; see the module docs).
    pub fn new(config: CostConfig) -> Self {
        Lbdf {
            config,
            phased: true,
        }
    }

    /// LBDF with the contract's rule read literally: a tensor held whole is streamed as if it
    /// were a group output, with no phases.
    pub fn literal(config: CostConfig) -> Self {
        Lbdf {
            config,
            phased: false,
        }
    }

    pub(crate) fn run(&self, view: &mut View) -> GroupCost {
        let act = view.lbdf(self.phased);
        let io = view.io_bytes();
        let w = view.weight_bytes;
        GroupCost::new(
            &self.config,
            view.len(),
            OnChipBytes {
                weights: w,
                activations: act,
            },
            io.0 + io.1 + w,
            w,
            io,
            None,
        )
    }
}

impl CostModel for Lbdf {
    fn name(&self) -> &str {
        "lbdf"
    }

    fn config(&self) -> &CostConfig {
        &self.config
    }

    fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost> {
        with_view(g, group, &self.config, |v| Ok(self.run(v)))
    }

    /// `W` plus the activation floor (see [`CostModel::buffer_floor`]): the weights stay on
    /// chip, and every tensor keeps a band of at least one row.
    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
        with_view(g, group, &self.config, |v| {
            Ok(OnChipBytes {
                weights: v.weight_bytes,
                activations: v.activation_floor(),
            })
        })
    }

    fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
        with_view(g, group, &self.config, |v| {
            v.lbdf(self.phased);
            let reasons = v.lbdf_reasons();
            let out = v
                .tensors
                .iter()
                .zip(&v.streams)
                .zip(reasons)
                .map(|((t, st), reason)| TensorCost {
                    tensor: g.name_of(t.source).to_string(),
                    kind: t.kind,
                    resident_rows: st.resident,
                    rows: t.h,
                    row_bytes: t.row,
                    bytes: st.resident * t.row,
                    whole: st.whole,
                    reason,
                })
                .collect();
            Ok(Some(out))
        })
    }
}
