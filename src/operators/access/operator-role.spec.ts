import { isOperatorRole, roleAllows } from './operator-role.js';

describe('operator roles', () => {
  it('each role holds the ones before it, and none after', () => {
    expect(roleAllows('viewer', 'viewer')).toBe(true);
    expect(roleAllows('viewer', 'operator')).toBe(false);
    expect(roleAllows('viewer', 'admin')).toBe(false);
    expect(roleAllows('operator', 'viewer')).toBe(true);
    expect(roleAllows('operator', 'operator')).toBe(true);
    expect(roleAllows('operator', 'admin')).toBe(false);
    expect(roleAllows('admin', 'viewer')).toBe(true);
    expect(roleAllows('admin', 'operator')).toBe(true);
    expect(roleAllows('admin', 'admin')).toBe(true);
  });

  it('knows exactly the three roles', () => {
    expect(['viewer', 'operator', 'admin'].every(isOperatorRole)).toBe(true);
    expect(['Admin', 'root', '', undefined, 1].some(isOperatorRole)).toBe(false);
  });
});
