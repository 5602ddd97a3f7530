import { IsOptional, IsString } from 'class-validator';
import { declaredProperties, unknownQueryParameters } from './validation.js';

class Base {
  @IsOptional() @IsString() status?: string;
  @IsOptional() @IsString() limit?: string;
}
class Derived extends Base {
  @IsOptional() @IsString() partnerId?: string;
}

describe('query parameters', () => {
  it("lists a DTO's parameters in declaration order, its parent's first", () => {
    expect(declaredProperties(Derived)).toEqual(['status', 'limit', 'partnerId']);
    expect(declaredProperties(Base)).toEqual(['status', 'limit']);
  });

  it('names each unknown parameter as one, with the accepted ones, or says the operation takes none', () => {
    expect(unknownQueryParameters(['foo'], ['status', 'limit'])).toEqual([
      'query parameter foo is not accepted; accepted: status, limit',
    ]);
    expect(unknownQueryParameters(['verbose'], [])).toEqual([
      'query parameter verbose is not accepted; this operation takes none',
    ]);
  });

  it('names at most ten, then counts the rest', () => {
    const many = Array.from({ length: 25 }, (_, i) => `p${i}`);
    const out = unknownQueryParameters(many, ['status']);
    expect(out).toHaveLength(11);
    expect(out[9]).toBe('query parameter p9 is not accepted; accepted: status');
    expect(out[10]).toBe('and 15 more unknown query parameters');
  });
});
