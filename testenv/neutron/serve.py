"""Runs the real neutron-server API (PyPI `neutron`, ML2 + the L3 router plugin) on loopback.

The openstack plug-in's integration tests talk to this process: the routers, the extra-route
APIs (`extraroute`, `extraroute-atomic`), `revision_number` with `If-Match`, ports with
`allowed_address_pairs` and port security are Neutron's own code, not a model of it.

What is not production-like, and why:
  * SQLite instead of MySQL: the schema comes from the models (`create_all`), as Neutron's own
    unit tests build it; the alembic migrations are MySQL/PostgreSQL only.
  * `auth_strategy = noauth`: Keystone is not run (see test/support/openstack.ts); every request
    is admin in the project named by `X-Project-Id`, or Neutron's fake project.
  * No agents and the in-memory `fake:` messaging transport: nothing wires a data plane; the
    API and its database are the whole of what the route plug-in uses.
  * One thread (wsgiref): requests run one at a time, like one API worker.
  * `--no-atomic` removes `extraroute-atomic` from the L3 plugin's extensions, which is what a
    cloud older than Ussuri (2020) serves: only the read-modify-write of the whole route list.

  * `--page-size N` sets `pagination_max_limit`: every list answers at most N items and a
    `<collection>_links` `next` link, as a cloud that limits its pages does.

Usage: serve.py --port 0 --state-dir DIR [--no-atomic] [--max-routes N] [--page-size N]
Prints `NEUTRON_READY http://127.0.0.1:<port>` once it serves.
"""

import argparse
import logging
import os
import sys
import textwrap


def write_config(state_dir, max_routes, page_size):
    path = os.path.join(state_dir, "neutron.conf")
    db = os.path.join(state_dir, "neutron.sqlite")
    with open(path, "w") as f:
        f.write(
            textwrap.dedent(
                f"""\
                [DEFAULT]
                core_plugin = ml2
                service_plugins = router
                auth_strategy = noauth
                transport_url = fake:/
                allow_overlapping_ips = true
                api_paste_config = {os.path.join(sys.prefix, "etc", "neutron", "api-paste.ini")}
                api_extensions_path =
                debug = false
                use_stderr = true
                state_path = {state_dir}
                pagination_max_limit = {page_size}

                [database]
                connection = sqlite:///{db}

                [ml2]
                type_drivers = flat,vxlan
                tenant_network_types = vxlan
                mechanism_drivers =
                extension_drivers = port_security

                [ml2_type_vxlan]
                vni_ranges = 1:1000

                [quotas]
                quota_router_route = {max_routes}

                [oslo_concurrency]
                lock_path = {state_dir}/lock

                [oslo_policy]
                enforce_scope = false
                enforce_new_defaults = false
                """
            )
        )
    return path, db


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--no-atomic", action="store_true")
    # Extra routes per project (Neutron 2026.2 replaced max_routes with this quota).
    parser.add_argument("--max-routes", type=int, default=30)
    # Neutron's default, -1, serves whole lists.
    parser.add_argument("--page-size", type=int, default=-1)
    args = parser.parse_args()

    conf_file, db = write_config(args.state_dir, args.max_routes, args.page_size)

    from neutron.common import config

    config.register_common_config_options()
    config.init(["--config-file", conf_file], default_config_files=[])
    config.setup_logging()
    config.set_config_defaults()
    logging.getLogger().setLevel(logging.WARNING)

    if args.no_atomic:
        from neutron.services.l3_router import l3_router_plugin

        plugin = l3_router_plugin.L3RouterPlugin
        plugin._supported_extension_aliases = [
            a for a in plugin._supported_extension_aliases if a != "extraroute-atomic"
        ]

    # The schema from the models, as Neutron's unit tests build it on SQLite.
    import sqlalchemy
    from neutron.db.migration.models import head

    engine = sqlalchemy.create_engine(f"sqlite:///{db}")
    head.get_metadata().create_all(engine)
    engine.dispose()

    from neutron.server import api as api_server
    from wsgiref import simple_server

    app = api_server.api_server()

    class QuietHandler(simple_server.WSGIRequestHandler):
        def log_message(self, format, *a):  # noqa: A002 - the base class's name
            pass

    server = simple_server.make_server("127.0.0.1", args.port, app, handler_class=QuietHandler)
    print(f"NEUTRON_READY http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
