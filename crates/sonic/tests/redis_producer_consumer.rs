//! ProducerStateTable → ConsumerStateTable against a real `redis-server`: the APPL_DB key
//! layout after a flush, consumption of sets, field updates and deletes, large flushes, and
//! round-trip counts. Set `HEADROOM_SKIP_REDIS_TESTS=1` to skip (e.g. without redis-server).

use std::collections::BTreeMap;
use std::time::Duration;

use headroom_sonic::swss::testing::RedisServer;
use headroom_sonic::swss::{
    ConsumerStateTable, Db, DbConnection, Fields, KeyOpFields, Op, ProducerStateTable, TableName,
};

fn server() -> Option<RedisServer> {
    if std::env::var_os("HEADROOM_SKIP_REDIS_TESTS").is_some() {
        eprintln!("HEADROOM_SKIP_REDIS_TESTS set: skipping");
        return None;
    }
    Some(RedisServer::start().expect("start redis-server"))
}

fn table(name: &str) -> TableName {
    TableName::new(name).expect("table name")
}

fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(f, v)| ((*f).to_owned(), (*v).to_owned()))
        .collect()
}

fn appl(server: &RedisServer) -> DbConnection {
    DbConnection::open(&server.endpoint(), Db::Appl).expect("connect APPL_DB")
}

/// Pops everything and sorts by key (SPOP order is unspecified), keeping per-key order.
fn consume(consumer: &mut ConsumerStateTable) -> Vec<KeyOpFields> {
    let mut got = consumer.pop_all(100).expect("pop");
    got.sort_by(|a, b| a.key.cmp(&b.key));
    got
}

fn hgetall(conn: &mut DbConnection, key: &str) -> Fields {
    conn.query("HGETALL", redis::cmd("HGETALL").arg(key))
        .expect("HGETALL")
}

fn smembers(conn: &mut DbConnection, key: &str) -> Vec<String> {
    let mut m: Vec<String> = conn
        .query("SMEMBERS", redis::cmd("SMEMBERS").arg(key))
        .expect("SMEMBERS");
    m.sort();
    m
}

fn exists(conn: &mut DbConnection, key: &str) -> bool {
    conn.query::<i64>("EXISTS", redis::cmd("EXISTS").arg(key))
        .expect("EXISTS")
        == 1
}

#[test]
fn flush_leaves_swss_key_layout_and_publishes_once_per_new_key() {
    let Some(server) = server() else { return };
    let t = table("BUFFER_PROFILE_TABLE");
    let mut check = appl(&server);

    // Listen on the table channel like orchagent does.
    let client =
        redis::Client::open(format!("redis://127.0.0.1:{}/0", server.port())).expect("client");
    let mut sub_conn = client.get_connection().expect("pubsub connection");
    let mut pubsub = sub_conn.as_pubsub();
    pubsub
        .subscribe("BUFFER_PROFILE_TABLE_CHANNEL@0")
        .expect("SUBSCRIBE");
    pubsub
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("read timeout");

    let mut producer = ProducerStateTable::new(appl(&server));
    producer.set(
        &t,
        "pg_lossless_100000_5m_profile",
        [("xon", "19456"), ("xoff", "18432")],
    );
    assert_eq!(
        producer.flush().expect("flush"),
        1,
        "first flush pipelines SCRIPT LOAD + EVALSHA"
    );

    assert_eq!(
        smembers(&mut check, "BUFFER_PROFILE_TABLE_KEY_SET"),
        ["pg_lossless_100000_5m_profile"]
    );
    assert!(!exists(&mut check, "BUFFER_PROFILE_TABLE_DEL_SET"));
    assert_eq!(
        hgetall(
            &mut check,
            "_BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile"
        ),
        fields(&[("xon", "19456"), ("xoff", "18432")])
    );
    assert!(!exists(
        &mut check,
        "BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile"
    ));
    let msg = pubsub.get_message().expect("channel message");
    assert_eq!(msg.get_channel_name(), "BUFFER_PROFILE_TABLE_CHANNEL@0");
    assert_eq!(msg.get_payload::<String>().expect("payload"), "G");
    assert_eq!(producer.published(), 1);

    // A second set on a still-pending key merges into the staging hash and is not
    // re-announced.
    producer.set(&t, "pg_lossless_100000_5m_profile", [("size", "38912")]);
    assert_eq!(producer.flush().expect("flush"), 1);
    assert_eq!(producer.published(), 1);
    assert_eq!(
        hgetall(
            &mut check,
            "_BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile"
        ),
        fields(&[("xon", "19456"), ("xoff", "18432"), ("size", "38912")])
    );

    // A delete of a pending key: DEL_SET gets the key, the staging hash is dropped.
    producer.del(&t, "pg_lossless_100000_5m_profile");
    producer.del(&t, "other_profile");
    assert_eq!(producer.flush().expect("flush"), 1);
    assert_eq!(
        producer.published(),
        2,
        "only other_profile was newly pending"
    );
    assert_eq!(
        smembers(&mut check, "BUFFER_PROFILE_TABLE_KEY_SET"),
        ["other_profile", "pg_lossless_100000_5m_profile"]
    );
    assert_eq!(
        smembers(&mut check, "BUFFER_PROFILE_TABLE_DEL_SET"),
        ["other_profile", "pg_lossless_100000_5m_profile"]
    );
    assert!(!exists(
        &mut check,
        "_BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile"
    ));
    let msg = pubsub.get_message().expect("second channel message");
    assert_eq!(msg.get_payload::<String>().expect("payload"), "G");
}

#[test]
fn sets_updates_and_deletes_are_consumed() {
    let Some(server) = server() else { return };
    let pg = table("BUFFER_PG_TABLE");
    let mut producer = ProducerStateTable::new(appl(&server));
    let mut consumer = ConsumerStateTable::new(appl(&server), pg.clone());
    let mut check = appl(&server);

    producer.set(
        &pg,
        "Ethernet0:3-4",
        [("profile", "pg_lossless_100000_5m_profile")],
    );
    producer.set(&pg, "Ethernet0:0", [("profile", "ingress_lossy_profile")]);
    producer.flush().expect("flush");
    let got = consume(&mut consumer);
    assert_eq!(
        got,
        vec![
            KeyOpFields {
                key: "Ethernet0:0".into(),
                op: Op::Set,
                fields: fields(&[("profile", "ingress_lossy_profile")]),
            },
            KeyOpFields {
                key: "Ethernet0:3-4".into(),
                op: Op::Set,
                fields: fields(&[("profile", "pg_lossless_100000_5m_profile")]),
            },
        ]
    );
    assert_eq!(
        hgetall(&mut check, "BUFFER_PG_TABLE:Ethernet0:3-4"),
        fields(&[("profile", "pg_lossless_100000_5m_profile")])
    );
    for k in [
        "BUFFER_PG_TABLE_KEY_SET",
        "BUFFER_PG_TABLE_DEL_SET",
        "_BUFFER_PG_TABLE:Ethernet0:3-4",
    ] {
        assert!(!exists(&mut check, k), "{k} left behind");
    }

    // Field update: the consumer receives only the new field; the table hash merges.
    producer.set(&pg, "Ethernet0:3-4", [("extra", "1")]);
    producer.flush().expect("flush");
    let got = consume(&mut consumer);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].op, &got[0].fields),
        (Op::Set, &fields(&[("extra", "1")]))
    );
    assert_eq!(
        hgetall(&mut check, "BUFFER_PG_TABLE:Ethernet0:3-4"),
        fields(&[("profile", "pg_lossless_100000_5m_profile"), ("extra", "1")])
    );

    // del + set in one flush replaces the hash; the consumer sees DEL then SET.
    producer.del(&pg, "Ethernet0:3-4");
    producer.set(
        &pg,
        "Ethernet0:3-4",
        [("profile", "pg_lossless_50000_5m_profile")],
    );
    producer.flush().expect("flush");
    let got = consume(&mut consumer);
    assert_eq!(
        got.iter().map(|e| e.op).collect::<Vec<_>>(),
        [Op::Del, Op::Set],
        "{got:?}"
    );
    assert_eq!(
        got[1].fields,
        fields(&[("profile", "pg_lossless_50000_5m_profile")])
    );
    assert_eq!(
        hgetall(&mut check, "BUFFER_PG_TABLE:Ethernet0:3-4"),
        fields(&[("profile", "pg_lossless_50000_5m_profile")])
    );

    // Plain delete.
    producer.del(&pg, "Ethernet0:0");
    producer.flush().expect("flush");
    let got = consume(&mut consumer);
    assert_eq!(
        got,
        vec![KeyOpFields {
            key: "Ethernet0:0".into(),
            op: Op::Del,
            fields: Fields::new(),
        }]
    );
    assert!(!exists(&mut check, "BUFFER_PG_TABLE:Ethernet0:0"));

    // set then del of the same key in one flush: only the delete survives.
    producer.set(&pg, "Ethernet4:3-4", [("profile", "x")]);
    producer.del(&pg, "Ethernet4:3-4");
    producer.flush().expect("flush");
    let got = consume(&mut consumer);
    assert_eq!(got.iter().map(|e| e.op).collect::<Vec<_>>(), [Op::Del]);
    assert_eq!(consumer.pending().expect("SCARD"), 0);
}

#[test]
fn many_keys_over_several_tables_in_one_flush() {
    let Some(server) = server() else { return };
    let pg = table("BUFFER_PG_TABLE");
    let queue = table("BUFFER_QUEUE_TABLE");
    let mut producer = ProducerStateTable::new(appl(&server));
    let n = 300;
    for i in 0..n {
        let port = format!("Ethernet{}", 4 * i);
        producer.set(&pg, &format!("{port}:3-4"), [("profile", format!("p{i}"))]);
        producer.set(
            &queue,
            &format!("{port}:0-2"),
            [("profile", "q_lossy"), ("port", port.as_str())],
        );
    }
    assert_eq!(producer.pending(), 2 * n);
    let before = producer.connection().round_trips();
    assert_eq!(producer.flush().expect("flush"), 1);
    assert_eq!(producer.connection().round_trips() - before, 1);
    assert_eq!(producer.pending(), 0);
    assert_eq!(producer.published(), 2 * n as u64);

    let mut pg_consumer = ConsumerStateTable::new(appl(&server), pg.clone()).with_batch(128);
    let mut q_consumer = ConsumerStateTable::new(appl(&server), queue.clone());
    let got_pg = consume(&mut pg_consumer);
    let got_q = consume(&mut q_consumer);
    assert_eq!(got_pg.len(), n);
    assert_eq!(got_q.len(), n);
    let by_key: BTreeMap<&str, &KeyOpFields> = got_pg.iter().map(|e| (e.key.as_str(), e)).collect();
    assert_eq!(by_key.len(), n, "each key exactly once");
    for i in 0..n {
        let e = by_key[format!("Ethernet{}:3-4", 4 * i).as_str()];
        assert_eq!(e.op, Op::Set);
        assert_eq!(e.fields, fields(&[("profile", &format!("p{i}"))]));
    }
    assert!(got_q.iter().all(|e| e.op == Op::Set && e.fields.len() == 2));
}

#[test]
fn set_without_fields_reaches_consumer_as_del() {
    let Some(server) = server() else { return };
    let t = table("BUFFER_POOL_TABLE");
    let mut producer = ProducerStateTable::new(appl(&server));
    producer.set(
        &t,
        "ingress_lossless_pool",
        [("size", "1000"), ("type", "ingress")],
    );
    producer.flush().expect("flush");
    let mut consumer = ConsumerStateTable::new(appl(&server), t.clone());
    assert_eq!(consume(&mut consumer)[0].op, Op::Set);
    producer.set(&t, "ingress_lossless_pool", Vec::<(String, String)>::new());
    producer.flush().expect("flush");
    assert_eq!(consume(&mut consumer)[0].op, Op::Del);
}

#[test]
fn flush_round_trips_and_script_reload() {
    let Some(mut server) = server() else { return };
    let t = table("BUFFER_POOL_TABLE");
    let mut producer = ProducerStateTable::new(appl(&server));
    assert_eq!(producer.flush().expect("empty flush"), 0);

    producer.set(&t, "egress_lossy_pool", [("size", "1")]);
    assert_eq!(
        producer.flush().expect("flush"),
        1,
        "first flush: pipelined load"
    );
    producer.set(&t, "egress_lossy_pool", [("size", "2")]);
    assert_eq!(
        producer.flush().expect("flush"),
        1,
        "steady state: one EVALSHA"
    );

    let mut admin = appl(&server);
    let _: () = admin
        .query("SCRIPT FLUSH", redis::cmd("SCRIPT").arg("FLUSH"))
        .expect("SCRIPT FLUSH");
    producer.set(&t, "egress_lossy_pool", [("size", "3")]);
    assert_eq!(
        producer.flush().expect("flush"),
        2,
        "NOSCRIPT then pipelined load"
    );

    server.restart().expect("restart");
    producer.set(&t, "egress_lossy_pool", [("size", "4")]);
    assert_eq!(
        producer.flush().expect("flush after restart"),
        3,
        "broken socket, reconnect + NOSCRIPT, pipelined load"
    );
    let mut consumer = ConsumerStateTable::new(appl(&server), t);
    let got = consume(&mut consumer);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].fields, fields(&[("size", "4")]));
}

#[test]
fn failed_flush_keeps_operations_queued() {
    let Some(mut server) = server() else { return };
    let t = table("BUFFER_PG_TABLE");
    let mut producer = ProducerStateTable::new(appl(&server));
    producer.set(&t, "Ethernet8:3-4", [("profile", "p")]);
    producer.del(&t, "Ethernet12:3-4");
    server.kill();
    let err = producer.flush().expect_err("server is down");
    assert!(err.is_connection_error(), "{err}");
    assert_eq!(producer.pending(), 2);

    server.restart().expect("restart");
    producer.flush().expect("flush after restart");
    assert_eq!(producer.pending(), 0);
    let mut consumer = ConsumerStateTable::new(appl(&server), t);
    let got = consume(&mut consumer);
    assert_eq!(
        got.iter()
            .map(|e| (e.key.as_str(), e.op))
            .collect::<Vec<_>>(),
        [("Ethernet12:3-4", Op::Del), ("Ethernet8:3-4", Op::Set)]
    );
}

/// Splits a `MONITOR` line (`<time> [<db> <client>] "CMD" "arg" …`) into its client tag and
/// unquoted arguments.
fn parse_monitor_line(line: &str) -> (String, Vec<String>) {
    let open = line.find('[').unwrap_or(0);
    let close = line.find(']').unwrap_or(line.len());
    let client = line.get(open + 1..close).unwrap_or_default().to_owned();
    let mut args = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = line.get(close..).unwrap_or_default().chars();
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, '"') => current = Some(String::new()),
            (None, _) => {}
            (Some(s), '\\') => {
                if let Some(n) = chars.next() {
                    s.push(n);
                }
            }
            (Some(_), '"') => args.extend(current.take()),
            (Some(s), c) => s.push(c),
        }
    }
    (client, args)
}

#[test]
fn flush_runs_exactly_the_swss_command_sequence() {
    let Some(server) = server() else { return };
    let pg = table("BUFFER_PG_TABLE");
    let client =
        redis::Client::open(format!("redis://127.0.0.1:{}/0", server.port())).expect("client");
    let mut monitor = client.get_connection().expect("monitor connection");
    monitor
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("read timeout");
    monitor
        .send_packed_command(&redis::cmd("MONITOR").get_packed_command())
        .expect("MONITOR");
    assert_eq!(
        monitor.recv_response().expect("MONITOR reply"),
        redis::Value::Okay
    );

    let mut producer = ProducerStateTable::new(appl(&server));
    producer.set(&pg, "Ethernet0:3-4", [("profile", "p"), ("extra", "1")]);
    producer.del(&pg, "Ethernet4:3-4");
    producer.set(&pg, "Ethernet0:3-4", [("profile", "q")]);
    assert_eq!(producer.flush().expect("flush"), 1);

    let expected: Vec<Vec<&str>> = vec![
        vec!["SADD", "BUFFER_PG_TABLE_KEY_SET", "Ethernet0:3-4"],
        vec!["HSET", "_BUFFER_PG_TABLE:Ethernet0:3-4", "profile", "p"],
        vec!["HSET", "_BUFFER_PG_TABLE:Ethernet0:3-4", "extra", "1"],
        vec!["PUBLISH", "BUFFER_PG_TABLE_CHANNEL@0", "G"],
        vec!["SADD", "BUFFER_PG_TABLE_KEY_SET", "Ethernet4:3-4"],
        vec!["SADD", "BUFFER_PG_TABLE_DEL_SET", "Ethernet4:3-4"],
        vec!["DEL", "_BUFFER_PG_TABLE:Ethernet4:3-4"],
        vec!["PUBLISH", "BUFFER_PG_TABLE_CHANNEL@0", "G"],
        // Already pending: merged, not re-announced.
        vec!["SADD", "BUFFER_PG_TABLE_KEY_SET", "Ethernet0:3-4"],
        vec!["HSET", "_BUFFER_PG_TABLE:Ethernet0:3-4", "profile", "q"],
    ];
    let mut from_script = Vec::new();
    let mut from_client = Vec::new();
    for _ in 0..100 {
        if from_script.len() >= expected.len() {
            break;
        }
        let line: String =
            redis::from_owned_redis_value(monitor.recv_response().expect("monitor line"))
                .expect("monitor line text");
        let (source, args) = parse_monitor_line(&line);
        if source.ends_with(" lua") {
            from_script.push(args);
        } else {
            from_client.push(args.first().cloned().unwrap_or_default());
        }
    }
    assert_eq!(from_script, expected);
    assert_eq!(
        from_client,
        ["SCRIPT", "EVALSHA"],
        "one pipelined round trip"
    );
}
