//! The [`Explainer`] trait.

use crate::error::Result;
use crate::explanation::Explanation;
use fuselage_cost::CostModel;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;

/// Says which edges of a fusion group make it invalid under a cost model.
///
/// A call takes the group and the [`CostModel`] it is judged by, and returns a score for every
/// internal edge and node and the selected edges ([`Explanation`]). Every random choice comes
/// from `rng`, so the same seed gives the same explanation.
///
/// ## One carrier for β
///
/// The model's [`config`](CostModel::config) is the one place β (the on-chip buffer) and the
/// element sizes live; an explainer reads what it needs from it and holds no β of its own.
/// So an explainer cannot be asked about one β while judging at another: the caller (a
/// splitter, the report, the program) hands over the very model it judges the group by.
/// An explainer that reads costs, such as [`CostExplainer`](crate::CostExplainer), explains
/// with that model (a [`Cached`](fuselage_cost::Cached) one shares its answers with the
/// caller); a learned one reads β from its config for its classifier; one that needs neither
/// ignores it.
///
/// Required: [`name`](Explainer::name) and [`explain`](Explainer::explain).
///
/// # Example: an explainer downstream
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Lbdf};
/// use fuselage_explain::{Explainer, Explanation, Result, Selection, group_edges};
/// use fuselage_ir::{Graph, NodeSet};
/// use rand_chacha::ChaCha8Rng;
///
/// /// Blames the edges that carry the biggest tensors.
/// struct BiggestTensor;
///
/// impl Explainer for BiggestTensor {
///     fn name(&self) -> &str { "biggest-tensor" }
///     fn explain(&self, g: &Graph, group: &NodeSet, _model: &dyn CostModel,
///         _rng: &mut ChaCha8Rng) -> Result<Explanation>
///     {
///         let (order, edges) = group_edges(g, group)?;
///         let scores = edges.iter().map(|&(u, _)| g.node(u).shape.elements() as f32).collect();
///         Explanation::from_scores(self.name(), &order, edges, scores, None, &Selection::default())
///     }
/// }
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let group = NodeSet::from_ids(g.len(), g.node_ids().take(8));
/// let mut rng = rand::SeedableRng::seed_from_u64(0);
/// let model = Lbdf::new(CostConfig::kib(256)?);
/// let e = BiggestTensor.explain(&g, &group, &model, &mut rng)?;
/// assert_eq!(e.edge_scores.len(), e.edges.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Explainer: Send + Sync {
    /// A short name (`gnne`, `pg`, `rg`, `cost`, `random`).
    fn name(&self) -> &str;

    /// Explains why `group` (a non-empty set of `g`'s nodes) is invalid under `model`, at its
    /// configuration (β and the element sizes: [`CostModel::config`]).
    ///
    /// # Errors
    /// [`ExplainError::BadGroup`](crate::ExplainError::BadGroup) for a set that is not a group
    /// of `g`; the cost model's and the classifier's own errors.
    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        model: &dyn CostModel,
        rng: &mut ChaCha8Rng,
    ) -> Result<Explanation>;
}

macro_rules! forward {
    ($($ty:ty),*) => {$(
        impl<E: Explainer + ?Sized> Explainer for $ty {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn explain(
                &self,
                g: &Graph,
                group: &NodeSet,
                model: &dyn CostModel,
                rng: &mut ChaCha8Rng,
            ) -> Result<Explanation> {
                (**self).explain(g, group, model, rng)
            }
        }
    )*};
}

forward!(&E, Box<E>, std::sync::Arc<E>);
