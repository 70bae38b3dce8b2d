/** The catalogue of object types: source-of-truth types and the service's own models. */
export interface ObjectTypeDef {
  appLabel: string;
  model: string;
  /** Human name, e.g. "Device". */
  display: string;
  /** List endpoint for source-of-truth types, e.g. `/api/dcim/devices/`. */
  path?: string;
  /** Source-of-truth objects live in branches and are stored as free-form attributes. */
  sourceOfTruth?: boolean;
}

export class ObjectTypeRegistry {
  private readonly types = new Map<string, ObjectTypeDef & { id: number }>();

  register(def: ObjectTypeDef): void {
    const name = `${def.appLabel}.${def.model}`;
    if (this.types.has(name)) throw new Error(`object type ${name} is registered twice`);
    this.types.set(name, { ...def, id: this.types.size + 1 });
  }

  get(name: string): (ObjectTypeDef & { id: number }) | undefined {
    return this.types.get(name);
  }

  has(name: string): boolean {
    return this.types.has(name);
  }

  all(): Array<ObjectTypeDef & { id: number; name: string }> {
    return [...this.types.entries()].map(([name, def]) => ({ ...def, name }));
  }

  sourceOfTruth(): Array<ObjectTypeDef & { id: number; name: string }> {
    return this.all().filter((t) => t.sourceOfTruth);
  }
}

/** The default source-of-truth catalogue (contract 3.3). */
export const DEFAULT_CATALOGUE: ObjectTypeDef[] = [
  { appLabel: 'dcim', model: 'site', display: 'Site', path: '/api/dcim/sites/' },
  { appLabel: 'dcim', model: 'rack', display: 'Rack', path: '/api/dcim/racks/' },
  { appLabel: 'dcim', model: 'device', display: 'Device', path: '/api/dcim/devices/' },
  { appLabel: 'dcim', model: 'interface', display: 'Interface', path: '/api/dcim/interfaces/' },
  { appLabel: 'dcim', model: 'cable', display: 'Cable', path: '/api/dcim/cables/' },
  { appLabel: 'ipam', model: 'vrf', display: 'VRF', path: '/api/ipam/vrfs/' },
  { appLabel: 'ipam', model: 'prefix', display: 'Prefix', path: '/api/ipam/prefixes/' },
  { appLabel: 'ipam', model: 'ipaddress', display: 'IP address', path: '/api/ipam/ip-addresses/' },
  { appLabel: 'ipam', model: 'vlan', display: 'VLAN', path: '/api/ipam/vlans/' },
  { appLabel: 'circuits', model: 'circuit', display: 'Circuit', path: '/api/circuits/circuits/' },
  { appLabel: 'tenancy', model: 'tenant', display: 'Tenant', path: '/api/tenancy/tenants/' },
].map((d) => ({ ...d, sourceOfTruth: true }));
