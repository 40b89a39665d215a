//! The transaction mixes a run can deal: TPC-C's standard one, and the two
//! variations of Wang et al. (IEICE 2011), Table 3 ("Transaction types in
//! TPC-C benchmark"), which section 3.3.2 runs for Fig. 12: "Here we present
//! another two types of workloads, read intensive and write intensive, as
//! indicated in Table 3."
//!
//! Table 3's shares, percent (New-Order, Payment, Delivery, Stock-Level,
//! Order-Status): normal 43.48 / 43.48 / 4.35 / 4.35 / 4.35, read intensive
//! 4.35 / 4.35 / 4.35 / 43.48 / 43.48, write intensive 96.00 / 1.00 / 1.00 /
//! 1.00 / 1.00. The read-intensive deck is the standard one with the
//! read-write and read-only types swapped (1, 1, 1, 10, 10 of 23 cards); the
//! write-intensive one holds 96 New-Orders and one of each other type (100
//! cards). Both fall outside clause 5.2.3's minimums on purpose: the mix
//! audit says so.

use serde::{Deserialize, Serialize};

use crate::txn::TxnType;

/// Which deck the terminals deal from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// TPC-C's mix (Table 3's "normal").
    #[default]
    Standard,
    /// Table 3's "read intensive": Stock-Level and Order-Status 43.48 % each.
    ReadIntensive,
    /// Table 3's "write intensive": New-Order 96 %.
    WriteIntensive,
}

impl Mix {
    pub const ALL: [Mix; 3] = [Mix::Standard, Mix::ReadIntensive, Mix::WriteIntensive];

    pub fn name(self) -> &'static str {
        match self {
            Mix::Standard => "standard",
            Mix::ReadIntensive => "read-intensive",
            Mix::WriteIntensive => "write-intensive",
        }
    }

    /// `standard`, `read-intensive` or `write-intensive`.
    pub fn parse(text: &str) -> Option<Mix> {
        Mix::ALL.into_iter().find(|m| m.name() == text)
    }

    /// Cards per type of a Table 3 variation's deck, in [`TxnType::ALL`]'s
    /// order (New-Order, Payment, Order-Status, Delivery, Stock-Level);
    /// `None` for the standard mix, whose deck is the driver's own.
    pub fn cards(self) -> Option<[usize; 5]> {
        match self {
            Mix::Standard => None,
            Mix::ReadIntensive => Some([1, 1, 10, 1, 10]),
            Mix::WriteIntensive => Some([96, 1, 1, 1, 1]),
        }
    }
}

/// The deck's share of `kind`, percent (`None` for the standard mix).
pub fn share_percent(mix: Mix, kind: TxnType) -> Option<f64> {
    let cards = mix.cards()?;
    let total: usize = cards.iter().sum();
    Some(100.0 * cards[kind as usize] as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decks_hold_table_3s_shares() {
        // Table 3, rounded as the paper prints them.
        let r = |m, k| (share_percent(m, k).unwrap() * 100.0).round() / 100.0;
        assert_eq!(r(Mix::ReadIntensive, TxnType::StockLevel), 43.48);
        assert_eq!(r(Mix::ReadIntensive, TxnType::OrderStatus), 43.48);
        assert_eq!(r(Mix::ReadIntensive, TxnType::NewOrder), 4.35);
        assert_eq!(r(Mix::ReadIntensive, TxnType::Delivery), 4.35);
        assert_eq!(r(Mix::WriteIntensive, TxnType::NewOrder), 96.0);
        assert_eq!(r(Mix::WriteIntensive, TxnType::Payment), 1.0);
        assert_eq!(share_percent(Mix::Standard, TxnType::NewOrder), None);
        for m in Mix::ALL {
            assert_eq!(Mix::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn a_terminal_deals_the_mix_it_was_given() {
        let mut rng = crate::rand::Rng::stream(7, &[1]);
        let mut deck = crate::txn::Deck::of(Mix::WriteIntensive);
        let mut n = [0usize; 5];
        for _ in 0..100 {
            n[deck.deal(&mut rng) as usize] += 1;
        }
        assert_eq!(n, [96, 1, 1, 1, 1]);
        let mut deck = crate::txn::Deck::of(Mix::ReadIntensive);
        let mut n = [0usize; 5];
        for _ in 0..23 {
            n[deck.deal(&mut rng) as usize] += 1;
        }
        assert_eq!(n, [1, 1, 10, 1, 10]);
    }
}
