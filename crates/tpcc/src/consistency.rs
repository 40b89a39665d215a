//! The consistency conditions of clause 3.3.2, checked with one query each.

use serde::{Deserialize, Serialize};

use crate::error::{During, TpccError};
use crate::load::connect;
use crate::schema;

/// One condition: how many warehouses, districts or orders violate it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionResult {
    /// The condition's number in clause 3.3.2.
    pub number: u32,
    pub description: String,
    pub violations: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyReport {
    pub conditions: Vec<ConditionResult>,
}

impl ConsistencyReport {
    pub fn ok(&self) -> bool {
        self.conditions.iter().all(|c| c.violations == 0)
    }
}

/// (number, description, query counting the violating rows). Plain SQL
/// that PostgreSQL and MariaDB read alike (MariaDB compares the boolean of
/// condition 5 as 0/1), so both DBMSs are checked by the same queries.
pub(crate) const CONDITIONS: [(u32, &str, &str); 6] = [
    (
        1,
        "W_YTD = sum(D_YTD) for each warehouse",
        "SELECT count(*) FROM warehouse w
         WHERE w.w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w.w_id)",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district",
        "SELECT count(*) FROM district d
         WHERE d.d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id)
            OR d.d_next_o_id - 1 <> (SELECT coalesce(max(no_o_id), d.d_next_o_id - 1) FROM new_order
                                      WHERE no_w_id = d.d_w_id AND no_d_id = d.d_id)",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW_ORDER, for each district",
        "SELECT count(*) FROM (
            SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n FROM new_order
            GROUP BY no_w_id, no_d_id) x
         WHERE span <> n",
    ),
    (
        4,
        "sum(O_OL_CNT) = rows in ORDER_LINE, for each district",
        "SELECT count(*) FROM district d
         WHERE (SELECT coalesce(sum(o_ol_cnt), 0) FROM orders WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id)
            <> (SELECT count(*) FROM order_line WHERE ol_w_id = d.d_w_id AND ol_d_id = d.d_id)",
    ),
    (
        5,
        "O_CARRIER_ID is null exactly for the orders in NEW_ORDER",
        "SELECT count(*) FROM orders o
         WHERE (o.o_carrier_id IS NULL) <> EXISTS (
            SELECT 1 FROM new_order WHERE no_w_id = o.o_w_id AND no_d_id = o.o_d_id AND no_o_id = o.o_id)",
    ),
    (
        6,
        "O_OL_CNT = the order's rows in ORDER_LINE, for each order",
        "SELECT count(*) FROM orders o
         LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS n FROM order_line
                    GROUP BY ol_w_id, ol_d_id, ol_o_id) l
           ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
         WHERE coalesce(l.n, 0) <> o.o_ol_cnt",
    ),
];

/// Checks conditions 1-6 of clause 3.3.2 in one snapshot.
pub fn check_consistency(db: &postgres::Config) -> Result<ConsistencyReport, TpccError> {
    let mut client = connect(db)?;
    if let Some(table) = schema::missing_table(&mut client)? {
        return Err(TpccError::NotLoaded {
            target: crate::load::describe(db),
            table,
        });
    }
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .during("starting the consistency check")?;
    let mut conditions = Vec::new();
    for (number, description, sql) in CONDITIONS {
        let violations: i64 = tx
            .query_one(sql, &[])
            .during("checking consistency")?
            .get(0);
        conditions.push(condition(number, description, violations));
    }
    tx.commit().during("finishing the consistency check")?;
    Ok(ConsistencyReport { conditions })
}

/// The report of one condition's count of violations.
pub(crate) fn condition(number: u32, description: &str, violations: i64) -> ConditionResult {
    ConditionResult {
        number,
        description: description.to_string(),
        violations: violations.max(0) as u64,
    }
}
