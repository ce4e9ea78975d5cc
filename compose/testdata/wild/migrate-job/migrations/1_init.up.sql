CREATE TABLE invoices (id serial primary key);
