//! What several pieces of the optimiser share: hash maps keyed by node sets, and the bound on
//! what the rest of a plan still pays.

use crate::bound::RestFloor;
use crate::problem::Problem;
use fuselage_ir::NodeSet;

type Fx = std::hash::BuildHasherDefault<fuselage_cost::FxHasher>;
pub(super) type FxMap<K, V> = std::collections::HashMap<K, V, Fx>;
pub(super) type FxSet<K> = std::collections::HashSet<K, Fx>;

/// What every plan through the down-set `covered` still pays for the rest, in the problem's
/// objective ([`Problem::remaining_bound_with`] the rest floor's rereads and cuts), and those
/// cuts.
pub(super) fn rest_bound(p: &Problem<'_>, floor: &RestFloor, covered: &NodeSet) -> (u64, u64) {
    let (rereads, cuts) = floor.rest(covered);
    let rest = p.remaining_bound_with(covered, rereads.saturating_add(cuts));
    (rest, cuts)
}
