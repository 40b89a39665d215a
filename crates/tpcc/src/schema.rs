//! The nine tables of clause 1.3, their primary keys, and the two secondary
//! indexes the transactions need (customer by last name, order by customer).
//!
//! Identifiers and counters are `integer` (the spec's numeric(N) with N <= 9
//! fits); money and rates keep the spec's exact `numeric(p, s)`, so the
//! consistency conditions compare exact sums. ORDER is called `orders`
//! (ORDER is an SQL keyword).

use crate::error::{During, TpccError};

/// Tables in load order; also the order `drop_schema` drops them.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// Created before the load, without keys, so COPY fills heaps only.
pub const CREATE: &str = "
CREATE TABLE warehouse (
    w_id integer NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
    w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (
    d_id integer NOT NULL, d_w_id integer NOT NULL, d_name varchar(10), d_street_1 varchar(20),
    d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9),
    d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id integer);
CREATE TABLE customer (
    c_id integer NOT NULL, c_d_id integer NOT NULL, c_w_id integer NOT NULL,
    c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20),
    c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16),
    c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4),
    c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt integer,
    c_delivery_cnt integer, c_data varchar(500));
CREATE TABLE history (
    h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, h_w_id integer,
    h_date timestamp, h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE new_order (no_o_id integer NOT NULL, no_d_id integer NOT NULL, no_w_id integer NOT NULL);
CREATE TABLE orders (
    o_id integer NOT NULL, o_d_id integer NOT NULL, o_w_id integer NOT NULL, o_c_id integer,
    o_entry_d timestamp, o_carrier_id integer, o_ol_cnt integer, o_all_local integer);
CREATE TABLE order_line (
    ol_o_id integer NOT NULL, ol_d_id integer NOT NULL, ol_w_id integer NOT NULL,
    ol_number integer NOT NULL, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d timestamp,
    ol_quantity integer, ol_amount numeric(6,2), ol_dist_info char(24));
CREATE TABLE item (
    i_id integer NOT NULL, i_im_id integer, i_name varchar(24), i_price numeric(5,2),
    i_data varchar(50));
CREATE TABLE stock (
    s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_quantity integer,
    s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24),
    s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24),
    s_dist_09 char(24), s_dist_10 char(24), s_ytd integer, s_order_cnt integer,
    s_remote_cnt integer, s_data varchar(50));
CREATE TABLE tpcc_meta (
    warehouses integer NOT NULL, seed bigint NOT NULL, c_last_load integer NOT NULL,
    c_id_load integer NOT NULL, ol_i_id_load integer NOT NULL);
";

/// Built after the load (one statement each, so workers can build them in
/// parallel): the spec's primary keys, plus customer by (last name, first
/// name) for Payment and Order-Status by last name, and orders by customer for
/// Order-Status's newest order.
pub const INDEXES: [&str; 10] = [
    "ALTER TABLE warehouse ADD PRIMARY KEY (w_id)",
    "ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id)",
    "ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id)",
    "ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
    "ALTER TABLE item ADD PRIMARY KEY (i_id)",
    "ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id)",
    "CREATE INDEX customer_by_last_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];

/// The first of our tables that exists in the database, if any.
pub fn existing_table(client: &mut postgres::Client) -> Result<Option<String>, TpccError> {
    let names: Vec<&str> = TABLES.iter().copied().chain(["tpcc_meta"]).collect();
    let row = client
        .query_opt(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname = ANY($1)
             ORDER BY c.relname LIMIT 1",
            &[&names],
        )
        .during("looking for existing tables")?;
    Ok(row.map(|r| r.get(0)))
}

/// The first of our tables that is missing, if any.
pub fn missing_table(client: &mut postgres::Client) -> Result<Option<String>, TpccError> {
    for t in TABLES.iter().copied().chain(["tpcc_meta"]) {
        let row = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&t])
            .during("looking for the TPC-C tables")?;
        if !row.get::<_, bool>(0) {
            return Ok(Some(t.to_string()));
        }
    }
    Ok(None)
}
