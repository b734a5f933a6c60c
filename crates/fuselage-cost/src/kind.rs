//! [`CostKind`]: the built-in cost models by name.

use crate::{Brr, CostConfig, CostModel, Lbdf, Tiled};

fuselage_ir::kinds! {
    /// A built-in cost model: the fusion method whose buffer rule prices a group.
    ///
    /// ```
    /// use fuselage_cost::{CostConfig, CostKind};
    /// let kind: CostKind = "brr".parse()?;
    /// let model = kind.model(CostConfig::new(128 * 1024)?);
    /// assert_eq!(model.name(), "brr");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub enum CostKind: "cost model" {
        /// [`Lbdf`], line-buffer depth-first: weights resident, row bands.
        Lbdf = "lbdf",
        /// [`Brr`], row-tiled buffer-requirement reduction (Optimus): weights resident or
        /// streamed.
        Brr = "brr",
        /// [`Tiled`], the loop-nest generalisation of LBDF: slices, streamed weights and
        /// keys, fused MLPs and attention (`../shared/design/tiled-fusion.md`).
        Tiled = "tiled",
    }
}

impl CostKind {
    /// The paper's models: the ones the validity classifier learns, and the paper's tables
    /// and the search table run (`tiled` is not among them).
    pub const PAPER: [CostKind; 2] = [CostKind::Lbdf, CostKind::Brr];

    /// The cost model at `config`.
    pub fn model(self, config: CostConfig) -> Box<dyn CostModel> {
        match self {
            CostKind::Lbdf => Box::new(Lbdf::new(config)),
            CostKind::Brr => Box::new(Brr::new(config)),
            CostKind::Tiled => Box::new(Tiled::new(config)),
        }
    }
}
