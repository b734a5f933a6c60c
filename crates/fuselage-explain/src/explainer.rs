//! The [`Explainer`] trait.

use crate::error::Result;
use crate::explanation::Explanation;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;

/// Says which edges of a fusion group make it invalid at a buffer of β bytes.
///
/// An explainer is built over what it explains (a classifier, a cost model, nothing); a call
/// takes the group and β and returns a score for every internal edge and node and the selected
/// edges ([`Explanation`]). Every random choice comes from `rng`, so the same seed gives the
/// same explanation.
///
/// Required: [`name`](Explainer::name) and [`explain`](Explainer::explain).
///
/// # Example: an explainer downstream
/// ```
/// use fuselage_explain::{Explainer, Explanation, Result, Selection, group_edges};
/// use fuselage_ir::{Graph, NodeSet};
/// use rand_chacha::ChaCha8Rng;
///
/// /// Blames the edges that carry the biggest tensors.
/// struct BiggestTensor;
///
/// impl Explainer for BiggestTensor {
///     fn name(&self) -> &str { "biggest-tensor" }
///     fn explain(&self, g: &Graph, group: &NodeSet, _beta: u64, _rng: &mut ChaCha8Rng)
///         -> Result<Explanation>
///     {
///         let (order, edges) = group_edges(g, group)?;
///         let scores = edges.iter().map(|&(u, _)| g.node(u).shape.elements() as f32).collect();
///         Explanation::from_scores(self.name(), &order, edges, scores, None, &Selection::default())
///     }
/// }
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let group = NodeSet::from_ids(g.len(), g.node_ids().take(8));
/// let mut rng = rand::SeedableRng::seed_from_u64(0);
/// let e = BiggestTensor.explain(&g, &group, 256 * 1024, &mut rng)?;
/// assert_eq!(e.edge_scores.len(), e.edges.len());
/// # Ok::<(), fuselage_explain::ExplainError>(())
/// ```
pub trait Explainer: Send + Sync {
    /// A short name (`gnne`, `pg`, `rg`, `cost`, `random`).
    fn name(&self) -> &str;

    /// Explains why `group` (a non-empty set of `g`'s nodes) is invalid at `beta_bytes`.
    ///
    /// # Errors
    /// [`ExplainError::BadGroup`](crate::ExplainError::BadGroup) for a set that is not a group
    /// of `g`; the model's own errors.
    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        beta_bytes: u64,
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
                beta_bytes: u64,
                rng: &mut ChaCha8Rng,
            ) -> Result<Explanation> {
                (**self).explain(g, group, beta_bytes, rng)
            }
        }
    )*};
}

forward!(&E, Box<E>, std::sync::Arc<E>);
