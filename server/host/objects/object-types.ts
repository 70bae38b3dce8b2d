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
  /**
   * The values an attribute takes by convention, with their display names (NetBox's): what
   * `OPTIONS` on the list answers as choices. Attributes stay free-form: they are not enforced.
   */
  choices?: Record<string, ReadonlyArray<readonly [string, string]>>;
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
const CATALOGUE_TYPES: ObjectTypeDef[] = [
  {
    appLabel: 'dcim',
    model: 'site',
    display: 'Site',
    path: '/api/dcim/sites/',
    choices: { status: choices('planned', 'staging', 'active', 'decommissioning', 'retired') },
  },
  {
    appLabel: 'dcim',
    model: 'rack',
    display: 'Rack',
    path: '/api/dcim/racks/',
    choices: { status: choices('reserved', 'available', 'planned', 'active', 'deprecated') },
  },
  {
    appLabel: 'dcim',
    model: 'device',
    display: 'Device',
    path: '/api/dcim/devices/',
    choices: {
      status: choices('offline', 'active', 'planned', 'staged', 'failed', 'inventory', 'decommissioning'),
      face: choices('front', 'rear'),
      airflow: choices('front-to-rear', 'rear-to-front', 'left-to-right', 'right-to-left', 'side-to-rear', 'passive'),
    },
  },
  {
    appLabel: 'dcim',
    model: 'interface',
    display: 'Interface',
    path: '/api/dcim/interfaces/',
    choices: { mode: choices('access', 'tagged', 'tagged-all') },
  },
  {
    appLabel: 'dcim',
    model: 'cable',
    display: 'Cable',
    path: '/api/dcim/cables/',
    choices: { status: choices('connected', 'planned', 'decommissioning') },
  },
  { appLabel: 'ipam', model: 'vrf', display: 'VRF', path: '/api/ipam/vrfs/' },
  {
    appLabel: 'ipam',
    model: 'prefix',
    display: 'Prefix',
    path: '/api/ipam/prefixes/',
    choices: { status: choices('container', 'active', 'reserved', 'deprecated') },
  },
  {
    appLabel: 'ipam',
    model: 'ipaddress',
    display: 'IP address',
    path: '/api/ipam/ip-addresses/',
    choices: {
      status: choices('active', 'reserved', 'deprecated', 'dhcp', 'slaac'),
      role: choices('loopback', 'secondary', 'anycast', 'vip', 'vrrp', 'hsrp', 'glbp', 'carp'),
    },
  },
  {
    appLabel: 'ipam',
    model: 'vlan',
    display: 'VLAN',
    path: '/api/ipam/vlans/',
    choices: { status: choices('active', 'reserved', 'deprecated') },
  },
  {
    appLabel: 'circuits',
    model: 'circuit',
    display: 'Circuit',
    path: '/api/circuits/circuits/',
    choices: { status: choices('planned', 'provisioning', 'active', 'offline', 'deprovisioning', 'decommissioned') },
  },
  { appLabel: 'tenancy', model: 'tenant', display: 'Tenant', path: '/api/tenancy/tenants/' },
];

export const DEFAULT_CATALOGUE: ObjectTypeDef[] = CATALOGUE_TYPES.map((d) => ({ ...d, sourceOfTruth: true }));

/** Values with NetBox's display names: the value capitalised, dashes as spaces (`"tagged-all"` -> `"Tagged all"`). */
function choices(...values: string[]): Array<readonly [string, string]> {
  const names: Record<string, string> = {
    dhcp: 'DHCP',
    slaac: 'SLAAC',
    vip: 'VIP',
    vrrp: 'VRRP',
    hsrp: 'HSRP',
    glbp: 'GLBP',
    carp: 'CARP',
  };
  return values.map((v) => [v, names[v] ?? v.charAt(0).toUpperCase() + v.slice(1).replace(/-/g, ' ')] as const);
}
