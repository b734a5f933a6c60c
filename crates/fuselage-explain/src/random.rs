//! [`RandomExplainer`]: the floor every explainer must clear.

use crate::error::Result;
use crate::explainer::Explainer;
use crate::explanation::{Explanation, Selection, group_edges};
use fuselage_cost::CostModel;
use fuselage_ir::{Graph, NodeSet};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Scores every edge uniformly at random in [0, 1): what an explanation is worth with no
/// information at all.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, Lbdf};
/// use fuselage_explain::{Explainer, RandomExplainer};
/// use fuselage_ir::NodeSet;
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let group = NodeSet::from_ids(g.len(), g.node_ids().take(10));
/// let model = Lbdf::new(CostConfig::kib(128)?);
/// let e = |seed| RandomExplainer::default()
///     .explain(&g, &group, &model, &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
/// assert_eq!(e(3)?, e(3)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct RandomExplainer {
    selection: Selection,
}

impl RandomExplainer {
    /// A random explainer selecting edges by `selection`.
    pub fn with_selection(selection: Selection) -> Self {
        RandomExplainer { selection }
    }
}

impl Explainer for RandomExplainer {
    fn name(&self) -> &str {
        "random"
    }

    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        _model: &dyn CostModel,
        rng: &mut ChaCha8Rng,
    ) -> Result<Explanation> {
        let (order, edges) = group_edges(g, group)?;
        let scores = edges.iter().map(|_| rng.random::<f32>()).collect();
        Explanation::from_scores(self.name(), &order, edges, scores, None, &self.selection)
    }
}
