import { DateTimeResolver } from 'graphql-scalars';
import { builder } from './builder.js';

// RFC 3339 date-time, serialised in UTC (the service's timestamps are GMT).
builder.addScalarType('DateTime', DateTimeResolver);
