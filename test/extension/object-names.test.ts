// Objects named as people name them (contract/object-names.ts): the names the service gives
// changed objects, which the trees, tabs, breadcrumbs and the Comments panel show.
import assert from 'node:assert/strict';
import { objectName, relatedReference } from '../../contract/object-names';

describe('contract: object names', () => {
  it('names a prefix by its prefix, an IP address by its address, a VLAN by name and number, a circuit by its id', () => {
    assert.equal(objectName('ipam.prefix', 'Prefix', 27, { prefix: '10.0.0.0/24', status: 'active' }), '10.0.0.0/24');
    assert.equal(objectName('ipam.ipaddress', 'IP address', 3, { address: '10.0.0.1/24' }), '10.0.0.1/24');
    assert.equal(objectName('ipam.vlan', 'VLAN', 4, { name: 'users', vid: 20 }), 'users (20)');
    assert.equal(objectName('ipam.vlan', 'VLAN', 4, { vid: 20 }), 'VLAN 20');
    assert.equal(objectName('circuits.circuit', 'Circuit', 5, { cid: 'CKT-1' }), 'CKT-1');
  });

  it('names an interface with its device: nested, looked up, or by the device id when the lookup does not know it', () => {
    const lookup = (type: string, id: number) => (type === 'dcim.device' && id === 5 ? 'sw1' : undefined);
    assert.equal(objectName('dcim.interface', 'Interface', 9, { name: 'eth0', device: 5 }, lookup), 'sw1 · eth0');
    assert.equal(objectName('dcim.interface', 'Interface', 9, { name: 'eth0', device: 6 }, lookup), 'Device 6 · eth0');
    assert.equal(
      objectName('dcim.interface', 'Interface', 9, { name: 'eth0', device: { id: 6, name: 'sw2' } }),
      'sw2 · eth0',
    );
    assert.equal(objectName('dcim.interface', 'Interface', 9, { name: 'eth0' }), 'eth0');
    assert.equal(
      objectName('virtualization.vminterface', 'VM interface', 1, { name: 'ens3', virtual_machine: { name: 'vm1' } }),
      'vm1 · ens3',
    );
    assert.deepEqual(relatedReference('dcim.interface'), { attribute: 'device', type: 'dcim.device' });
    assert.equal(relatedReference('dcim.device'), null);
  });

  it('names a cable by its label, else by its id; anything else by its name, else its type and id', () => {
    assert.equal(objectName('dcim.cable', 'Cable', 12, { label: 'uplink-7' }), 'uplink-7');
    assert.equal(objectName('dcim.cable', 'Cable', 12, { type: 'cat6' }), 'Cable #12');
    assert.equal(objectName('dcim.device', 'Device', 1, { name: 'sw1' }), 'sw1');
    assert.equal(objectName('dcim.device', 'Device', 1, { name: '' }), 'Device 1');
    assert.equal(objectName('dcim.site', 'Site', 2, null), 'Site 2');
  });
});
