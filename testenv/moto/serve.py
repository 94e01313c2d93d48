"""moto_server with EC2's "Routes per route table" quota enforced.

moto accepts any number of routes in a route table; EC2 refuses a CreateRoute beyond the
table's quota (50 non-propagated routes by default) with RouteLimitExceeded. With
MOTO_ROUTES_PER_TABLE=N this wrapper makes moto refuse the same way, so the aws plug-in's
route table room (SPEC R115-R118) is tested against the cloud's own refusal. Every other
behaviour is moto's: the arguments are moto_server's.
"""

import os
import sys

from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models.route_tables import RouteBackend
from moto.server import main


class RouteLimitExceeded(EC2ClientError):
    def __init__(self, limit: int):
        super().__init__(
            "RouteLimitExceeded",
            f"The maximum number of routes has been reached for the specified route table ({limit}).",
        )


def enforce_route_limit(limit: int) -> None:
    create_route = RouteBackend.create_route

    def limited(self, route_table_id, *args, **kwargs):
        table = self.get_route_table(route_table_id)
        # Propagated routes do not count against the quota; moto propagates none.
        if len(table.routes) >= limit:
            raise RouteLimitExceeded(limit)
        return create_route(self, route_table_id, *args, **kwargs)

    RouteBackend.create_route = limited


if __name__ == "__main__":
    limit = os.environ.get("MOTO_ROUTES_PER_TABLE")
    if limit:
        enforce_route_limit(int(limit))
    sys.argv[0] = "moto_server"
    sys.exit(main())
