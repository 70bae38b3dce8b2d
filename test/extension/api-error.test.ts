import assert from 'node:assert/strict';
import { ApiError, asApiError, errorBodyText, errorFromResponse, presentError } from '../../extension/core/api-error';

describe('extension: service errors', () => {
  it('tells a refused token from a refused permission on 403', () => {
    assert.equal(errorFromResponse(403, { detail: 'Invalid token.' }).kind, 'badCredentials');
    assert.equal(errorFromResponse(403, { detail: 'Token expired.' }).kind, 'badCredentials');
    assert.equal(errorFromResponse(403, { detail: 'Invalid username or password.' }).kind, 'badCredentials');
    assert.equal(
      errorFromResponse(403, { detail: 'You do not have permission to perform this action.' }).kind,
      'forbidden',
    );
  });

  it("classifies the other statuses and keeps the service's words", () => {
    const conflict = errorFromResponse(409, { detail: 'Submitting does not apply: the request is under review.' });
    assert.equal(conflict.kind, 'conflict');
    assert.equal(conflict.message, 'Submitting does not apply: the request is under review.');
    assert.equal(errorFromResponse(404, { detail: 'Not found.' }).kind, 'notFound');
    const stale = errorFromResponse(412, { detail: 'Device 7 has changed since the version If-Match names.' });
    assert.equal(stale.kind, 'stale');
    assert.equal(stale.message, 'Device 7 has changed since the version If-Match names.');
    assert.equal(errorFromResponse(500, 'boom').kind, 'server');
    const invalid = errorFromResponse(400, { comment: ['A comment is required to request changes.'] });
    assert.equal(invalid.kind, 'invalid');
    assert.equal(invalid.message, 'comment: A comment is required to request changes.');
    assert.deepEqual(invalid.fields, { comment: ['A comment is required to request changes.'] });
  });

  it('reads error bodies of both shapes', () => {
    assert.deepEqual(errorBodyText({ detail: 'x' }), { detail: 'x', fields: {} });
    assert.equal(errorBodyText({ non_field_errors: ['Reply on another change.'] }).detail, 'Reply on another change.');
    assert.equal(errorBodyText(undefined).detail, '');
    assert.equal(errorBodyText('<html>'.repeat(100)).detail, '');
  });

  it('offers Retry, Sign In and Show Logs where they help', () => {
    assert.deepEqual(presentError('Loading', new ApiError('unreachable', 'ECONNREFUSED')).actions, [
      'Retry',
      'Show Logs',
    ]);
    assert.deepEqual(
      presentError('Loading', new ApiError('unreachable', 'ECONNREFUSED'), { retryable: false }).actions,
      ['Show Logs'],
    );
    assert.deepEqual(presentError('Loading', new ApiError('badCredentials', 'Invalid token.')).actions, [
      'Sign In',
      'Show Logs',
    ]);
    assert.deepEqual(presentError('Loading', new ApiError('signedOut', 'Not signed in.')).actions, ['Sign In']);
    const refused = presentError('Submitting "Move sw1"', new ApiError('conflict', 'Already under review.', 409));
    assert.equal(refused.message, 'Submitting "Move sw1" was refused: Already under review.');
    assert.deepEqual(refused.actions, []);
    assert.match(
      presentError('Loading', new ApiError('forbidden', 'You do not have permission.')).message,
      /not allowed for you/,
    );
  });

  it('wraps anything thrown as an ApiError', () => {
    const e = asApiError(new TypeError('bad'));
    assert.equal(e.kind, 'badResponse');
    assert.equal(e.message, 'bad');
    assert.equal(asApiError('text').message, 'text');
  });
});
