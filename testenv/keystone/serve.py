"""Runs the real Keystone identity API (PyPI `keystone`) on loopback for the openstack tests.

Keystone's own code issues, validates and revokes the tokens (fernet), checks passwords and
application credentials, and serves the catalog; test/support/keystone.ts creates the project,
user, role assignment, application credential and network endpoints through its API.

What is not production-like, and why:
  * SQLite instead of MySQL: `scripts/keystone.sh` runs `keystone-manage db_sync` and
    `bootstrap` once into a template database; each server copies it, so a test starts in seconds.
  * Fresh fernet and credential keys per server, written here (what `keystone-manage
    fernet_setup` writes: urlsafe base64 of 32 random bytes, keys 0 and 1).
  * One thread (wsgiref): requests run one at a time, like one API worker.

Usage:
  serve.py --make-template DIR          (keystone.sh) db_sync + bootstrap into DIR/keystone.sqlite
  serve.py --port 0 --state-dir DIR --template DIR [--expiration SECONDS]
Prints `KEYSTONE_READY http://127.0.0.1:<port>` once it serves.
"""

import argparse
import logging
import os
import shutil
import subprocess
import sys
import textwrap

from cryptography.fernet import Fernet

ADMIN_PASSWORD = "keystone-admin-test"


def write_config(state_dir, db, expiration):
    for repo in ("fernet", "receipts", "credential"):
        path = os.path.join(state_dir, repo)
        os.makedirs(path, exist_ok=True)
        for i in ("0", "1"):
            with open(os.path.join(path, i), "wb") as f:
                f.write(Fernet.generate_key())
    path = os.path.join(state_dir, "keystone.conf")
    with open(path, "w") as f:
        f.write(
            textwrap.dedent(
                f"""\
                [DEFAULT]
                use_stderr = true
                debug = false

                [database]
                connection = sqlite:///{db}

                [token]
                provider = fernet
                expiration = {expiration}

                [fernet_tokens]
                key_repository = {state_dir}/fernet

                [fernet_receipts]
                key_repository = {state_dir}/receipts

                [credential]
                key_repository = {state_dir}/credential
                """
            )
        )
    return path


def make_template(directory):
    os.makedirs(directory, exist_ok=True)
    db = os.path.join(directory, "keystone.sqlite")
    conf = write_config(directory, db, 3600)
    manage = os.path.join(os.path.dirname(sys.executable), "keystone-manage")
    for args in (
        ["db_sync"],
        [
            "bootstrap",
            "--bootstrap-password",
            ADMIN_PASSWORD,
            "--bootstrap-region-id",
            "RegionOne",
        ],
    ):
        subprocess.run([manage, "--config-file", conf, *args], check=True)
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--make-template")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state-dir")
    parser.add_argument("--template")
    parser.add_argument("--expiration", type=int, default=3600)
    args = parser.parse_args()
    if args.make_template:
        return make_template(args.make_template)

    db = os.path.join(args.state_dir, "keystone.sqlite")
    shutil.copyfile(os.path.join(args.template, "keystone.sqlite"), db)
    os.environ["OS_KEYSTONE_CONFIG_FILES"] = write_config(args.state_dir, db, args.expiration)

    from keystone.server.wsgi import initialize_public_application
    from wsgiref import simple_server

    # Keystone parses sys.argv as its own (oslo.config) command line: hide this script's flags.
    sys.argv = sys.argv[:1]

    app = initialize_public_application()
    logging.getLogger().setLevel(logging.WARNING)

    class QuietHandler(simple_server.WSGIRequestHandler):
        def log_message(self, format, *a):  # noqa: A002 - the base class's name
            pass

    server = simple_server.make_server("127.0.0.1", args.port, app, handler_class=QuietHandler)
    print(f"KEYSTONE_READY http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
