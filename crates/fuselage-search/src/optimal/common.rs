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

#[cfg(test)]
mod tests {
    use super::super::testing::{chain, layers, set, with_problem};
    use super::*;
    use fuselage_cost::CostKind;

    #[test]
    fn the_rest_bound_is_the_compulsory_traffic_without_a_floor() {
        // Four Relus: the input read and the output written, then nothing.
        let g = chain(4);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let floor = RestFloor::default();
            assert_eq!(rest_bound(p, &floor, &NodeSet::new(4)), (512, 0));
            assert_eq!(rest_bound(p, &floor, &set(&g, &[0, 1])), (512, 0));
            assert_eq!(rest_bound(p, &floor, &NodeSet::full(4)), (0, 0));
        });
    }

    #[test]
    fn the_rest_bound_counts_the_cuts_no_group_can_hold() {
        // Under 1 KiB no group holds a conv with a neighbour, so the four tensors into and
        // out of the convs are each written and read (2 × 1,024): with the compulsory 1,024
        // in, 1,024 out and both convs' 2,320 bytes of weights, exactly the optimum.
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let floor = RestFloor::of(p, 64).unwrap();
            assert_eq!(
                rest_bound(p, &floor, &NodeSet::new(g.len())),
                (2048 + 2 * 2320 + 4 * 2048, 4 * 2048)
            );
            // Past the first layer: its conv's output read, the second conv's weights, the
            // output, and the two cuts left.
            assert_eq!(
                rest_bound(p, &floor, &set(&g, &[0, 1, 2])),
                (1024 + 2320 + 1024 + 2 * 2048, 2 * 2048)
            );
        });
    }
}
