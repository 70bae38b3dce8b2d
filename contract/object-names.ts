// How an object of the source of truth is named, as people name it: a prefix by its prefix
// (`10.0.0.0/24`), an IP address by its address, a VLAN by its name and number, a circuit by its
// circuit id, an interface (or another device component) with its device (`sw1 · eth0`), a cable
// by its label (else `Cable #12`); anything else by its name, else its type and id. Pure: the
// names of related objects come from a lookup the caller provides.

/** Components named with the device (or virtual machine) they belong to, and the attribute that names it. */
const PARENT_OF: Record<string, { attribute: string; type: string; display: string }> = {
  'dcim.interface': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.frontport': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.rearport': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.consoleport': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.consoleserverport': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.powerport': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.poweroutlet': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.devicebay': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.modulebay': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'dcim.inventoryitem': { attribute: 'device', type: 'dcim.device', display: 'Device' },
  'virtualization.vminterface': {
    attribute: 'virtual_machine',
    type: 'virtualization.virtualmachine',
    display: 'Virtual machine',
  },
};

/** The attribute that names objects of a type, when it is not `name`. */
const NAMED_BY: Record<string, string> = {
  'ipam.prefix': 'prefix',
  'ipam.ipaddress': 'address',
  'ipam.iprange': 'start_address',
  'ipam.aggregate': 'prefix',
  'circuits.circuit': 'cid',
};

/** Looks up the name of a related object by its type and id (undefined when unknown or not visible). */
export type RelatedName = (objectType: string, id: number) => string | undefined;

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** A reference's name: a nested object's `name`/`display`, or an id looked up. */
function referenceName(
  value: unknown,
  type: string,
  display: string,
  related: RelatedName | undefined,
): string | undefined {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const named = text(o.name) ?? text(o.display);
    if (named) return named;
    if (typeof o.id === 'number') return related?.(type, o.id) ?? `${display} ${o.id}`;
    return undefined;
  }
  if (typeof value === 'number' && Number.isInteger(value)) return related?.(type, value) ?? `${display} ${value}`;
  return text(value);
}

/** The attribute names whose value the name of an object of this type reads (for a caller that looks up related names). */
export function relatedReference(objectType: string): { attribute: string; type: string } | null {
  const parent = PARENT_OF[objectType];
  return parent ? { attribute: parent.attribute, type: parent.type } : null;
}

export function objectName(
  objectType: string,
  typeDisplay: string,
  id: number,
  attrs: Record<string, unknown> | null,
  related?: RelatedName,
): string {
  const own = attrs ? (text(attrs[NAMED_BY[objectType] ?? 'name']) ?? text(attrs.name)) : undefined;
  if (attrs && objectType === 'ipam.vlan') {
    const vid = text(attrs.vid);
    const name = text(attrs.name);
    if (name && vid) return `${name} (${vid})`;
    if (vid) return `VLAN ${vid}`;
  }
  if (objectType === 'dcim.cable') return text(attrs?.label) ?? own ?? `Cable #${id}`;
  const parent = PARENT_OF[objectType];
  if (parent && attrs && own) {
    const of = referenceName(attrs[parent.attribute], parent.type, parent.display, related);
    if (of) return `${of} · ${own}`;
  }
  return own ?? text(attrs?.display) ?? `${typeDisplay} ${id}`;
}
