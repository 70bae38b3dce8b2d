#!/usr/bin/python3
"""A pipeline's everyday steps with a real NetBox client (pynetbox) against the service.

Usage: pynetbox_flow.py BASE_URL TOKEN

Stages objects into a branch in bulk (create, update, delete), opens and submits a change
request for it, and reads everything back; checks nb.version, nb.status(), nb.openapi() and
choices(). Prints one line per step and exits non-zero at the first step that fails.
"""

import sys

import pynetbox

BASE, TOKEN = sys.argv[1], sys.argv[2]
steps = 0


def step(name, ok, detail=""):
    global steps
    steps += 1
    print(("ok " if ok else "FAILED ") + name + (": " + str(detail) if detail else ""), flush=True)
    if not ok:
        sys.exit(1)


nb = pynetbox.api(BASE, token=TOKEN)

step("nb.version", nb.version != "", nb.version)
status = nb.status()
step("nb.status()", "host-version" in status, status.get("host-version"))
spec = nb.openapi()
step("nb.openapi()", "/api/dcim/devices/" in spec.get("paths", {}), spec.get("openapi"))
choices = nb.dcim.devices.choices()
step("devices.choices()", "active" in [c["value"] for c in choices.get("status", [])])
cr_choices = nb.plugins.change_control.change_requests.choices()
step("change_requests.choices()", [c["value"] for c in cr_choices["priority"]] == ["low", "medium", "high", "critical"])

# A branch; writes in it carry the X-NetBox-Branch header on the session.
branch = nb.plugins.branching.branches.create(name="pynetbox-staging")
step("create branch", branch.id > 0, branch.schema_id)

existing = nb.dcim.devices.create(name="core-1", status="active", site=1)
step("create on main", existing.id > 0)

nb.http_session.headers["X-NetBox-Branch"] = branch.schema_id
created = nb.dcim.devices.create([{"name": "edge-%d" % i, "status": "planned", "site": 1} for i in range(20)])
step("bulk create in the branch", len(created) == 20 and all(d.id for d in created), len(created))
updated = nb.dcim.devices.update([{"id": d.id, "status": "active"} for d in created[:10]] + [{"id": existing.id, "status": "offline"}])
step("bulk update in the branch", len(updated) == 11 and all(d.status == "active" for d in updated[:10]))
step("bulk delete in the branch", nb.dcim.devices.delete([d.id for d in created[15:]]) is True)

in_branch = list(nb.dcim.devices.all())
step("read back in the branch", len(in_branch) == 16, len(in_branch))
step("filter in the branch", len(list(nb.dcim.devices.filter(status="active"))) == 10)
step("get in the branch", nb.dcim.devices.get(existing.id).status == "offline")
step("count in the branch", nb.dcim.devices.count() == 16)

del nb.http_session.headers["X-NetBox-Branch"]
step("main untouched", [d.name for d in nb.dcim.devices.all()] == ["core-1"])
step("main object unchanged", nb.dcim.devices.get(existing.id).status == "active")

changes = list(nb.plugins.branching.changes.filter(branch_id=branch.id))
step("one branch change per object", len(changes) == 16, len(changes))

cr = nb.plugins.change_control.change_requests.create(branch=branch.id, title="Stage edge devices", priority="high")
step("open a change request", cr.id > 0, cr.status)
submitted = nb.http_session.post(
    "%s/api/plugins/change-control/change-requests/%d/submit/" % (BASE, cr.id),
    headers={"Authorization": "Token " + TOKEN},
)
step("submit it", submitted.ok, submitted.status_code)
cr = nb.plugins.change_control.change_requests.get(cr.id)
step("read it back", cr.status != "draft" and cr.priority == "high", cr.status)

print("%d steps passed" % steps)
