//! KeyspaceSubscriber and Table against a real `redis-server`: initial enumeration,
//! notification latency, field and key deletion, connection loss after a server restart, and
//! resubscription with re-enumeration. Set `HEADROOM_SKIP_REDIS_TESTS=1` to skip.

use std::time::{Duration, Instant};

use headroom_sonic::swss::testing::{wait_for, RedisServer};
use headroom_sonic::swss::{
    ChangeEvent, Db, DbConnection, Fields, KeyspaceSubscriber, SubscriberOptions, SwssError, Table,
    TableName,
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

fn set_event(t: &str, key: &str, pairs: &[(&str, &str)]) -> ChangeEvent {
    ChangeEvent::Set {
        table: table(t),
        key: key.to_owned(),
        fields: fields(pairs),
    }
}

fn del_event(t: &str, key: &str) -> ChangeEvent {
    ChangeEvent::Del {
        table: table(t),
        key: key.to_owned(),
    }
}

fn config_table(server: &RedisServer) -> Table {
    Table::new(DbConnection::open(&server.endpoint(), Db::Config).expect("connect CONFIG_DB"))
}

/// Polls until at least `n` events arrived; bounded by 2 s and 1000 polls.
fn poll_events(sub: &mut KeyspaceSubscriber, n: usize) -> Vec<ChangeEvent> {
    poll_counted(sub, n).0
}

/// [`poll_events`], also returning how many polls were made.
fn poll_counted(sub: &mut KeyspaceSubscriber, n: usize) -> (Vec<ChangeEvent>, u64) {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut got = Vec::new();
    let mut polls = 0;
    for _ in 0..1000 {
        if got.len() >= n || Instant::now() >= deadline {
            break;
        }
        got.extend(sub.poll(Duration::from_millis(100)).expect("poll"));
        polls += 1;
    }
    (got, polls)
}

#[test]
fn initial_enumeration_returns_existing_rows() {
    let Some(server) = server() else { return };
    let mut cfg = config_table(&server);
    let (port, pg, cable) = (table("PORT"), table("BUFFER_PG"), table("CABLE_LENGTH"));
    cfg.set(&port, "Ethernet4", [("speed", "100000"), ("mtu", "9100")]);
    cfg.set(&port, "Ethernet0", [("speed", "400000")]);
    cfg.set(&pg, "Ethernet0|3-4", [("profile", "NULL")]);
    cfg.set(&cable, "AZURE", [("Ethernet0", "5m")]);
    assert_eq!(cfg.flush().expect("flush"), 1, "one MULTI/EXEC");
    // Not a hash: must be skipped, not fail the enumeration.
    let _: () = cfg
        .connection()
        .query("SET", redis::cmd("SET").arg("PORT|bogus").arg("x"))
        .expect("SET");

    let before = cfg.connection().round_trips();
    let rows = cfg
        .enumerate(&[port.clone(), pg.clone()])
        .expect("enumerate");
    assert_eq!(
        cfg.connection().round_trips() - before,
        2,
        "KEYS pipeline + HGETALL pipeline"
    );
    assert_eq!(
        rows.iter()
            .map(|r| format!("{}|{}", r.table, r.key))
            .collect::<Vec<_>>(),
        [
            "PORT|Ethernet0",
            "PORT|Ethernet4",
            "BUFFER_PG|Ethernet0|3-4"
        ]
    );

    let mut sub = KeyspaceSubscriber::subscribe(&server.endpoint(), Db::Config, &[port, pg])
        .expect("subscribe");
    assert!(sub.is_connected());
    assert_eq!(sub.queued(), 3);
    let events = sub.poll(Duration::ZERO).expect("poll");
    assert_eq!(
        events,
        vec![
            set_event("BUFFER_PG", "Ethernet0|3-4", &[("profile", "NULL")]),
            set_event("PORT", "Ethernet0", &[("speed", "400000")]),
            set_event("PORT", "Ethernet4", &[("speed", "100000"), ("mtu", "9100")]),
        ]
    );
    assert_eq!(
        sub.known_keys(&table("PORT")).collect::<Vec<_>>(),
        ["Ethernet0", "Ethernet4"]
    );
    // Nothing else pending.
    assert_eq!(
        sub.poll(Duration::from_millis(20)).expect("poll"),
        Vec::new()
    );
}

#[test]
fn keyspace_changes_from_another_client_arrive_within_milliseconds() {
    let Some(server) = server() else { return };
    let port = table("PORT");
    let mut sub =
        KeyspaceSubscriber::subscribe(&server.endpoint(), Db::Config, std::slice::from_ref(&port))
            .expect("subscribe");
    assert_eq!(sub.poll(Duration::ZERO).expect("poll"), Vec::new());

    // SONiC's flags were configured because the fresh server had none.
    let mut writer = config_table(&server);
    let flags: Vec<String> = writer
        .connection()
        .query(
            "CONFIG GET",
            redis::cmd("CONFIG")
                .arg("GET")
                .arg("notify-keyspace-events"),
        )
        .expect("CONFIG GET");
    for c in ['A', 'K', 'E'] {
        assert!(flags[1].contains(c), "flags {flags:?}");
    }

    // HSET of two fields in one command: one notification, one SET with both fields.
    let start = Instant::now();
    writer.set(
        &port,
        "Ethernet8",
        [("speed", "100000"), ("admin_status", "up")],
    );
    writer.flush().expect("flush");
    let events = poll_events(&mut sub, 1);
    let latency = start.elapsed();
    assert_eq!(
        events,
        vec![set_event(
            "PORT",
            "Ethernet8",
            &[("speed", "100000"), ("admin_status", "up")]
        )]
    );
    assert!(latency < Duration::from_millis(500), "took {latency:?}");

    // Field removal: the SET carries the remaining hash.
    let _: i64 = writer
        .connection()
        .query(
            "HDEL",
            redis::cmd("HDEL").arg("PORT|Ethernet8").arg("admin_status"),
        )
        .expect("HDEL");
    assert_eq!(
        poll_events(&mut sub, 1),
        vec![set_event("PORT", "Ethernet8", &[("speed", "100000")])]
    );

    // Other tables and other databases are not reported.
    let mut other = config_table(&server);
    other.set(&table("PORT_QOS_MAP"), "Ethernet8", [("pfc_enable", "3,4")]);
    other.flush().expect("flush");
    let mut state =
        Table::new(DbConnection::open(&server.endpoint(), Db::State).expect("STATE_DB"));
    state.set(&port, "Ethernet8", [("state", "ok")]);
    state.flush().expect("flush");

    // Key deletion.
    writer.del(&port, "Ethernet8");
    writer.flush().expect("flush");
    assert_eq!(
        poll_events(&mut sub, 1),
        vec![del_event("PORT", "Ethernet8")]
    );
    assert_eq!(
        sub.poll(Duration::from_millis(50)).expect("poll"),
        Vec::new()
    );
    assert_eq!(sub.known_keys(&port).count(), 0);

    // Deleting the last field removes the key: no SET, one DEL.
    writer.set(&port, "Ethernet12", [("speed", "25000")]);
    writer.flush().expect("flush");
    assert_eq!(poll_events(&mut sub, 1).len(), 1);
    let _: i64 = writer
        .connection()
        .query(
            "HDEL",
            redis::cmd("HDEL").arg("PORT|Ethernet12").arg("speed"),
        )
        .expect("HDEL");
    assert_eq!(
        poll_events(&mut sub, 1),
        vec![del_event("PORT", "Ethernet12")]
    );
}

#[test]
fn many_notifications_are_resolved_in_order_with_one_read_per_poll() {
    let Some(server) = server() else { return };
    let pg = table("BUFFER_PG");
    let mut sub =
        KeyspaceSubscriber::subscribe(&server.endpoint(), Db::Config, std::slice::from_ref(&pg))
            .expect("subscribe");
    let mut writer = config_table(&server);
    for i in 0..50 {
        writer.set(&pg, &format!("Ethernet{i}|3-4"), [("profile", "NULL")]);
    }
    writer.del(&pg, "Ethernet7|3-4");
    let before = sub.data_connection().round_trips();
    writer.flush().expect("flush");
    let (mut events, mut polls) = poll_counted(&mut sub, 50);
    events.extend(sub.poll(Duration::from_millis(20)).expect("poll"));
    polls += 1;
    // The SET of Ethernet7 is resolved after its deletion when both notifications are in
    // the same batch, so it is dropped; the last event of that key must be the DEL.
    assert!((50..=51).contains(&events.len()), "{events:?}");
    let last_7 = events.iter().rev().find(|e| e.key() == "Ethernet7|3-4");
    assert_eq!(last_7, Some(&del_event("BUFFER_PG", "Ethernet7|3-4")));
    for i in (0..50).filter(|i| *i != 7) {
        let key = format!("Ethernet{i}|3-4");
        assert!(
            events.contains(&set_event("BUFFER_PG", &key, &[("profile", "NULL")])),
            "{key} missing"
        );
    }
    // At most one (pipelined HGETALL) round trip per poll, however many notifications.
    let reads = sub.data_connection().round_trips() - before;
    assert!(reads <= polls, "{reads} round trips for {polls} polls");
}

#[test]
fn existing_notification_flags_are_respected_or_completed() {
    let Some(server) = server() else { return };
    let mut conn = DbConnection::open(&server.endpoint(), Db::Config).expect("connect");
    let set_flags = |conn: &mut DbConnection, flags: &str| {
        let _: () = conn
            .query(
                "CONFIG SET",
                redis::cmd("CONFIG")
                    .arg("SET")
                    .arg("notify-keyspace-events")
                    .arg(flags),
            )
            .expect("CONFIG SET");
    };
    let get_flags = |conn: &mut DbConnection| -> String {
        let v: Vec<String> = conn
            .query(
                "CONFIG GET",
                redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("notify-keyspace-events"),
            )
            .expect("CONFIG GET");
        v[1].clone()
    };
    set_flags(&mut conn, "Kgh");
    assert!(!conn.ensure_keyspace_events().expect("ensure"));
    let mut flags: Vec<char> = get_flags(&mut conn).chars().collect();
    flags.sort_unstable();
    assert_eq!(
        flags,
        ['K', 'g', 'h'],
        "unchanged (Redis normalises the order)"
    );
    set_flags(&mut conn, "Ex");
    assert!(conn.ensure_keyspace_events().expect("ensure"));
    let flags = get_flags(&mut conn);
    assert!(
        flags.contains('A') && flags.contains('K') && flags.contains('E'),
        "{flags}"
    );

    // A subscriber told not to configure sees nothing when notifications are off.
    set_flags(&mut conn, "");
    let options = SubscriberOptions {
        configure_keyspace_events: false,
        ..SubscriberOptions::default()
    };
    let port = table("PORT");
    let mut sub = KeyspaceSubscriber::subscribe_with(
        &server.endpoint(),
        Db::Config,
        std::slice::from_ref(&port),
        options,
    )
    .expect("subscribe");
    let mut writer = config_table(&server);
    writer.set(&port, "Ethernet0", [("speed", "1000")]);
    writer.flush().expect("flush");
    assert_eq!(
        sub.poll(Duration::from_millis(100)).expect("poll"),
        Vec::new()
    );
}

#[test]
fn restart_is_detected_then_resync_resubscribes_and_reenumerates() {
    let Some(mut server) = server() else { return };
    let (port, cable) = (table("PORT"), table("CABLE_LENGTH"));
    let mut cfg = config_table(&server);
    cfg.set(&port, "Ethernet0", [("speed", "100000")]);
    cfg.set(&port, "Ethernet4", [("speed", "100000")]);
    cfg.set(&cable, "AZURE", [("Ethernet0", "5m")]);
    cfg.flush().expect("flush");
    let mut sub = KeyspaceSubscriber::subscribe(
        &server.endpoint(),
        Db::Config,
        &[port.clone(), cable.clone()],
    )
    .expect("subscribe");
    assert_eq!(poll_events(&mut sub, 3).len(), 3);

    server.restart().expect("restart");
    // The listener sees EOF at once; allow a few polls for the notice to arrive.
    let lost = wait_for(
        Duration::from_secs(2),
        Duration::from_millis(1),
        || match sub.poll(Duration::from_millis(50)) {
            Err(e @ SwssError::SubscriptionLost { .. }) => Some(e),
            Err(e) => panic!("unexpected error {e}"),
            Ok(events) => {
                assert!(events.is_empty(), "{events:?}");
                None
            }
        },
    );
    assert!(lost.is_some(), "connection loss not detected");
    assert!(!sub.is_connected());
    assert!(sub.poll(Duration::ZERO).is_err(), "stays lost until resync");

    // The restarted server is empty; repopulate it differently.
    let mut cfg = config_table(&server);
    cfg.set(&port, "Ethernet0", [("speed", "400000")]);
    cfg.set(&port, "Ethernet8", [("speed", "25000")]);
    cfg.flush().expect("flush");

    let resynced = wait_for(Duration::from_secs(5), Duration::from_millis(20), || {
        sub.resync().ok()
    });
    assert!(resynced.is_some(), "resync failed");
    assert!(sub.is_connected());
    assert_eq!(
        sub.poll(Duration::ZERO).expect("poll"),
        vec![
            del_event("CABLE_LENGTH", "AZURE"),
            del_event("PORT", "Ethernet4"),
            set_event("PORT", "Ethernet0", &[("speed", "400000")]),
            set_event("PORT", "Ethernet8", &[("speed", "25000")]),
        ]
    );

    // Notifications work again (the restarted server had to be reconfigured).
    cfg.set(&cable, "AZURE", [("Ethernet8", "40m")]);
    cfg.flush().expect("flush");
    assert_eq!(
        poll_events(&mut sub, 1),
        vec![set_event("CABLE_LENGTH", "AZURE", &[("Ethernet8", "40m")])]
    );
}

#[test]
fn resync_while_server_down_fails_and_can_be_retried() {
    let Some(mut server) = server() else { return };
    let port = table("PORT");
    let mut sub =
        KeyspaceSubscriber::subscribe(&server.endpoint(), Db::Config, std::slice::from_ref(&port))
            .expect("subscribe");
    server.kill();
    let err = sub.resync().expect_err("server down");
    assert!(err.is_connection_error(), "{err}");
    assert!(!sub.is_connected());
    server.restart().expect("restart");
    sub.resync().expect("resync");
    assert!(sub.is_connected());
    assert_eq!(sub.poll(Duration::ZERO).expect("poll"), Vec::new());
}
