//! [`RandomExplainer`]: the floor every explainer must clear.

use crate::error::Result;
use crate::explainer::Explainer;
use crate::explanation::{Explanation, Selection, group_edges};
use fuselage_ir::{Graph, NodeSet};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Scores every edge uniformly at random in [0, 1): what an explanation is worth with no
/// information at all.
///
/// # Example
/// ```
/// use fuselage_explain::{Explainer, RandomExplainer};
/// use fuselage_ir::NodeSet;
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let group = NodeSet::from_ids(g.len(), g.node_ids().take(10));
/// let e = |seed| RandomExplainer::default()
///     .explain(&g, &group, 1 << 17, &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
/// assert_eq!(e(3)?, e(3)?);
/// # Ok::<(), fuselage_explain::ExplainError>(())
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
        _beta_bytes: u64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Explanation> {
        let (order, edges) = group_edges(g, group)?;
        let scores = edges.iter().map(|_| rng.random::<f32>()).collect();
        Explanation::from_scores(self.name(), &order, edges, scores, None, &self.selection)
    }
}
